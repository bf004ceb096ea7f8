// The proxy of one call of a block's callback: messages in and out, checked against the
// call's links.
#include "tributary/block_proxy.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "tributary/detail/block_engine.hpp"
#include "tributary/errors.hpp"

namespace tributary {

void BlockWriter::Write(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  bytes_->insert(bytes_->end(), p, p + bytes);
}

void BlockReader::Read(void* data, std::size_t bytes) {
  if (size_ - *pos_ < bytes) Short(bytes);
  if (bytes) std::memcpy(data, data_ + *pos_, bytes);
  *pos_ += bytes;
}

void BlockReader::Short(std::size_t bytes) const {
  throw UsageError(proxy_->Where() + ": dequeue of " + std::to_string(bytes) +
                   " bytes from block " + std::to_string(from_) + ", which has " +
                   std::to_string(size_ - *pos_) + " left");
}

std::string BlockProxy::Where() const {
  return engine_ ? engine_->Where(gid_, call_)
                 : "block " + std::to_string(gid_) + ", round " + std::to_string(call_);
}

BlockWriter BlockProxy::Outgoing(int to) {
  if (std::find(out_.begin(), out_.end(), to) == out_.end()) {
    std::string link;
    for (int g : out_) link += " " + std::to_string(g);
    throw UsageError(Where() + ": enqueue to block " + std::to_string(to) +
                     ", which is not a partner in this round (out-link:" +
                     (link.empty() ? std::string(" none") : link) + ")");
  }
  return BlockWriter(outgoing_[to]);
}

BlockReader BlockProxy::Incoming(int from) {
  auto it = incoming_.find(from);
  if (it == incoming_.end())
    throw UsageError(Where() + ": dequeue from block " + std::to_string(from) +
                     ", which is not in the in-link");
  return BlockReader(*this, from, it->second.data(), it->second.size(), read_[from]);
}

std::size_t BlockProxy::Remaining(int from) const {
  auto it = incoming_.find(from);
  if (it == incoming_.end()) return 0;
  auto r = read_.find(from);
  return it->second.size() - (r == read_.end() ? 0 : r->second);
}

}  // namespace tributary
