// The all-to-all as an adapter over the block engine: records (source, destination, bytes)
// bundled per next hop and routed over k-ary swap steps, one digit of the destination per
// step.
#include "tributary/detail/block_all_to_all.hpp"

#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

// Every block in every call: the groups of the swap steps, shifted so that call c receives
// what step c - 1 sent.
class Route final : public BlockPartners {
 public:
  explicit Route(const SwapPartners& swap) : BlockPartners(swap.Grid()), swap_(swap) {}
  int Calls() const override { return Steps() + 1; }
  std::vector<int> InLink(int call, int gid) const override {
    if (call <= 0 || call >= Calls()) return {};
    return swap_.Steps().empty() ? std::vector<int>{gid} : swap_.Group(call - 1, gid);
  }
  std::vector<int> OutLink(int call, int gid) const override {
    if (call < 0 || call >= Calls() - 1) return {};
    return swap_.Steps().empty() ? std::vector<int>{gid} : swap_.Group(call, gid);
  }
  // The next hop of a record at `gid` bound for `target`, sent in `call`.
  int Hop(int call, int gid, int target) const {
    return swap_.Steps().empty() ? gid : swap_.Toward(call, gid, target);
  }

 private:
  int Steps() const { return std::max<int>(static_cast<int>(swap_.Steps().size()), 1); }
  SwapPartners swap_;
};

// One record in a routed bundle: source, destination, length, bytes.
struct RouteRecord {
  std::int32_t from, to;
  std::uint64_t bytes;
};

void AppendRecord(std::vector<char>& bundle, int from, int to, const char* data,
                  std::size_t bytes) {
  RouteRecord r{from, to, bytes};
  const auto* p = reinterpret_cast<const char*>(&r);
  bundle.insert(bundle.end(), p, p + sizeof r);
  bundle.insert(bundle.end(), data, data + bytes);
}

template <class F>
void ForEachRecord(const std::vector<char>& bundle, F f) {
  std::size_t pos = 0;
  while (pos + sizeof(RouteRecord) <= bundle.size()) {
    RouteRecord r;
    std::memcpy(&r, bundle.data() + pos, sizeof r);
    pos += sizeof r;
    f(r.from, r.to, bundle.data() + pos, static_cast<std::size_t>(r.bytes));
    pos += static_cast<std::size_t>(r.bytes);
  }
}

}  // namespace

std::shared_ptr<const BlockPartners> AllToAllPartners(const SwapPartners& route) {
  return std::make_shared<const Route>(route);
}

// Friend of BlockProxy: fills the proxies the user sees from the engine's, and back.
class AllToAllAdapter {
 public:
  AllToAllAdapter(std::shared_ptr<const BlockPartners> partners, BlockEngine::Callback user)
      : partners_(std::move(partners)),
        route_(dynamic_cast<const Route&>(*partners_)),
        user_(std::move(user)) {}

  void operator()(void* block, BlockProxy& rp) const {
    const int gid = rp.gid_, call = rp.call_, last = route_.Calls() - 1;
    const int blocks = route_.Grid().Blocks();
    if (call == 0) {
      BlockProxy user = Seen(rp);
      user.out_.resize(static_cast<std::size_t>(blocks));
      std::iota(user.out_.begin(), user.out_.end(), 0);
      user_(block, user);
      for (const auto& [to, bytes] : user.outgoing_)
        AppendRecord(rp.outgoing_[route_.Hop(0, gid, to)], gid, to, bytes.data(), bytes.size());
    } else if (call < last) {
      for (const auto& [from, bundle] : rp.incoming_)
        ForEachRecord(bundle, [&](int src, int to, const char* data, std::size_t bytes) {
          AppendRecord(rp.outgoing_[route_.Hop(call, gid, to)], src, to, data, bytes);
        });
    } else {
      BlockProxy user = Seen(rp);
      user.in_.resize(static_cast<std::size_t>(blocks));
      std::iota(user.in_.begin(), user.in_.end(), 0);
      for (int g : user.in_) user.incoming_[g];
      for (const auto& [from, bundle] : rp.incoming_)
        ForEachRecord(bundle, [&](int src, int to, const char* data, std::size_t bytes) {
          if (to != gid)
            throw UsageError(rp.Where() + ": a record for block " + std::to_string(to) +
                             " arrived here");
          auto& in = user.incoming_[src];
          in.insert(in.end(), data, data + bytes);
        });
      user_(block, user);
    }
  }

 private:
  static BlockProxy Seen(const BlockProxy& rp) {
    BlockProxy user;
    user.gid_ = rp.gid_;
    user.call_ = rp.call_;
    user.engine_ = rp.engine_;
    return user;
  }
  std::shared_ptr<const BlockPartners> partners_;
  const Route& route_;
  BlockEngine::Callback user_;
};

BlockEngine::Callback AllToAllCallback(std::shared_ptr<const BlockPartners> partners,
                                       BlockEngine::Callback user) {
  return AllToAllAdapter(std::move(partners), std::move(user));
}

}  // namespace tributary::detail
