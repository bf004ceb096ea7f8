// The proxy of one call of a block's callback: messages in and out, checked against the
// call's links.
#include "tributary/block_proxy.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "tributary/detail/block_engine.hpp"
#include "tributary/errors.hpp"

namespace tributary {

std::string BlockProxy::Where() const {
  return engine_ ? engine_->Where(gid_, call_)
                 : "block " + std::to_string(gid_) + ", round " + std::to_string(call_);
}

void BlockProxy::Append(int to, const void* data, std::size_t bytes) {
  if (std::find(out_.begin(), out_.end(), to) == out_.end()) {
    std::string link;
    for (int g : out_) link += " " + std::to_string(g);
    throw UsageError(Where() + ": enqueue to block " + std::to_string(to) +
                     ", which is not a partner in this round (out-link:" +
                     (link.empty() ? std::string(" none") : link) + ")");
  }
  auto& buf = outgoing_[to];
  const auto* p = static_cast<const char*>(data);
  buf.insert(buf.end(), p, p + bytes);
}

void BlockProxy::Take(int from, void* data, std::size_t bytes) {
  auto it = incoming_.find(from);
  std::size_t& pos = read_[from];
  if (it == incoming_.end() || it->second.size() - pos < bytes)
    throw UsageError(Where() + ": dequeue of " + std::to_string(bytes) + " bytes from block " +
                     std::to_string(from) +
                     (it == incoming_.end()
                          ? std::string(", which is not in the in-link")
                          : ", which has " + std::to_string(it->second.size() - pos) + " left"));
  if (bytes) std::memcpy(data, it->second.data() + pos, bytes);
  pos += bytes;
}

std::size_t BlockProxy::Remaining(int from) const {
  auto it = incoming_.find(from);
  if (it == incoming_.end()) return 0;
  auto r = read_.find(from);
  return it->second.size() - (r == read_.end() ? 0 : r->second);
}

}  // namespace tributary
