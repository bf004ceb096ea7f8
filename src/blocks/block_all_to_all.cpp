// The all-to-all over the block engine: sent directly when one step reaches every block,
// else as records (source, destination, bytes) bundled per next hop and routed over k-ary
// swap steps, one digit of the destination per step. The records are written where they
// leave from and read where they arrive: a record is copied only when it is forwarded.
#include "tributary/detail/blocks/block_all_to_all.hpp"

#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include "tributary/block_proxy.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

std::vector<int> Everyone(int blocks) {
  std::vector<int> all(static_cast<std::size_t>(blocks));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// Every block sends to every block at call 0 and receives from every block at call 1: the
// user's callback runs as it is.
class Direct final : public BlockPartners {
 public:
  explicit Direct(const BlockGrid& grid) : BlockPartners(grid), all_(Everyone(grid.Blocks())) {}
  int Calls() const override { return 2; }
  std::vector<int> InLink(int call, int) const override {
    return call == 1 ? all_ : std::vector<int>();
  }
  std::vector<int> OutLink(int call, int) const override {
    return call == 0 ? all_ : std::vector<int>();
  }

 private:
  std::vector<int> all_;
};

// Every block in every call: the groups of the swap steps (two or more), shifted so that
// call c receives what step c - 1 sent.
class Route final : public BlockPartners {
 public:
  explicit Route(const SwapPartners& swap) : BlockPartners(swap.Grid()), swap_(swap) {}
  int Calls() const override { return static_cast<int>(swap_.Steps().size()) + 1; }
  std::vector<int> InLink(int call, int gid) const override {
    if (call <= 0 || call >= Calls()) return {};
    return swap_.Group(call - 1, gid);
  }
  std::vector<int> OutLink(int call, int gid) const override {
    if (call < 0 || call >= Calls() - 1) return {};
    return swap_.Group(call, gid);
  }
  // The next hop of a record at `gid` bound for `target`, sent in `call`.
  int Hop(int call, int gid, int target) const { return swap_.Toward(call, gid, target); }

 private:
  SwapPartners swap_;
};

void AppendRecord(std::vector<char>& bundle, int from, int to, const char* data,
                  std::size_t bytes) {
  const RouteRecord r{from, to, bytes};
  const auto* p = reinterpret_cast<const char*>(&r);
  bundle.insert(bundle.end(), p, p + sizeof r);
  bundle.insert(bundle.end(), data, data + bytes);
}

template <class F>
void ForEachRecord(const char* bundle, std::size_t size, F f) {
  std::size_t pos = 0;
  while (pos + sizeof(RouteRecord) <= size) {
    RouteRecord r;
    std::memcpy(&r, bundle + pos, sizeof r);
    pos += sizeof r;
    f(r.from, r.to, bundle + pos, static_cast<std::size_t>(r.bytes));
    pos += static_cast<std::size_t>(r.bytes);
  }
}

}  // namespace

RecordFrame& FrameOf(RecordFrame* frames, int gid) { return frames[gid]; }

void WriteRecord(RecordFrame& frame, const char* data, std::size_t bytes) {
  std::vector<char>& bundle = *frame.bundle;
  if (frame.end == 0 || bundle.size() != frame.end) {  // a record to another block came between
    frame.length_at = bundle.size() + offsetof(RouteRecord, bytes);
    AppendRecord(bundle, frame.from, frame.to, data, 0);
  }
  bundle.insert(bundle.end(), data, data + bytes);
  std::uint64_t length = 0;
  std::memcpy(&length, bundle.data() + frame.length_at, sizeof length);
  length += bytes;
  std::memcpy(bundle.data() + frame.length_at, &length, sizeof length);
  frame.end = bundle.size();
}

std::shared_ptr<const BlockPartners> AllToAllPartners(const BlockGrid& grid,
                                                      const std::vector<int>& radix,
                                                      bool contiguous) {
  if (radix.size() == 1 && radix[0] >= grid.Blocks() && radix[0] >= 2)
    return std::make_shared<const Direct>(grid);
  return AllToAllPartners(SwapPartners(grid, radix, contiguous));
}

std::shared_ptr<const BlockPartners> AllToAllPartners(const SwapPartners& route) {
  if (route.Steps().size() <= 1) return std::make_shared<const Direct>(route.Grid());
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
      // The user writes each message straight into the bundle of its first hop.
      BlockProxy user = Seen(rp);
      user.out_ = Everyone(blocks);
      std::vector<RecordFrame> frames(static_cast<std::size_t>(blocks));
      for (int to = 0; to < blocks; ++to) {
        RecordFrame& f = frames[static_cast<std::size_t>(to)];
        f.bundle = &rp.outgoing_[route_.Hop(0, gid, to)];
        f.from = gid;
        f.to = to;
      }
      user.frames_ = frames.data();
      user_(block, user);
    } else if (call < last) {
      for (const auto& [from, in] : rp.incoming_)
        ForEachRecord(in.data, in.size, [&](int src, int to, const char* data, std::size_t bytes) {
          AppendRecord(rp.outgoing_[route_.Hop(call, gid, to)], src, to, data, bytes);
        });
    } else {
      // The user reads each message where it arrived (a message in several records is
      // joined first).
      BlockProxy user = Seen(rp);
      user.in_ = Everyone(blocks);
      for (int g : user.in_) user.incoming_[g];
      for (const auto& [from, in] : rp.incoming_)
        ForEachRecord(in.data, in.size, [&](int src, int to, const char* data, std::size_t bytes) {
          if (to != gid)
            throw UsageError(rp.Where() + ": a record for block " + std::to_string(to) +
                             " arrived here");
          BlockProxy::In& m = user.incoming_[src];
          if (!m.data) {
            m.data = data;
            m.size = bytes;
            return;
          }
          if (m.data != m.bytes.data()) m.bytes.assign(m.data, m.data + m.size);
          m.bytes.insert(m.bytes.end(), data, data + bytes);
          m.data = m.bytes.data();
          m.size = m.bytes.size();
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
  if (dynamic_cast<const Route*>(partners.get()) == nullptr) return user;  // direct
  return AllToAllAdapter(std::move(partners), std::move(user));
}

}  // namespace tributary::detail
