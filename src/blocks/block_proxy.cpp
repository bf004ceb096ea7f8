// The proxy of one call of a block's callback: messages in and out, checked against the
// call's links.
#include "tributary/block_proxy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "tributary/errors.hpp"

namespace tributary {

void BlockWriter::Write(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  if (frame_) {
    detail::WriteRecord(*frame_, p, bytes);
    return;
  }
  bytes_->insert(bytes_->end(), p, p + bytes);
}

void BlockReader::Read(void* data, std::size_t bytes) {
  if (size_ - *pos_ < bytes) Short(bytes);
  if (bytes) std::memcpy(data, data_ + *pos_, bytes);
  *pos_ += bytes;
}

const char* BlockReader::ReadInPlace(std::size_t bytes, std::size_t align) {
  if (size_ - *pos_ < bytes) Short(bytes);
  const char* p = data_ + *pos_;
  if (align > 1 && reinterpret_cast<std::uintptr_t>(p) % align != 0) Misaligned(align);
  *pos_ += bytes;
  return p;
}

void BlockReader::Misaligned(std::size_t align) const {
  throw UsageError(proxy_->Where() + ": dequeue in place from block " + std::to_string(from_) +
                   ": the values are not aligned to " + std::to_string(align) +
                   " bytes in the message; dequeue them into memory of your own");
}

void BlockReader::Short(std::size_t bytes) const {
  throw UsageError(proxy_->Where() + ": dequeue of " + std::to_string(bytes) +
                   " bytes from block " + std::to_string(from_) + ", which has " +
                   std::to_string(size_ - *pos_) + " left");
}

std::string BlockProxy::Where() const {
  return engine_ ? detail::BlockCallWhere(*engine_, gid_, call_)
                 : "block " + std::to_string(gid_) + ", round " + std::to_string(call_);
}

BlockWriter BlockProxy::Outgoing(int to) {
  if (frames_ && to >= 0 && static_cast<std::size_t>(to) < out_.size())
    return BlockWriter(
        detail::FrameOf(frames_, to));  // an all-to-all's first call: every gid is a target
  if (std::find(out_.begin(), out_.end(), to) == out_.end()) {
    std::string link;
    for (int g : out_) link += " " + std::to_string(g);
    throw UsageError(Where() + ": enqueue to block " + std::to_string(to) +
                     ", which is not a partner in this round (out-link:" +
                     (link.empty() ? std::string(" none") : link) + ")");
  }
  std::vector<char>& bytes = outgoing_[to];
  if (bytes.size() < prefix_) bytes.resize(prefix_);
  return BlockWriter(bytes);
}

BlockReader BlockProxy::Incoming(int from) {
  auto it = incoming_.find(from);
  if (it == incoming_.end())
    throw UsageError(Where() + ": dequeue from block " + std::to_string(from) +
                     ", which is not in the in-link");
  In& in = it->second;
  return BlockReader(*this, from, in.data, in.size, in.read);
}

std::size_t BlockProxy::Remaining(int from) const {
  auto it = incoming_.find(from);
  return it == incoming_.end() ? 0 : it->second.size - it->second.read;
}

}  // namespace tributary
