// The combine of packed messages (packed_combine.hpp).
#include "core/packed_combine.hpp"

#include <cstring>
#include <exception>

namespace tributary::detail {

void PackedCombine(const void* state, const void* in, void* inout, std::size_t count) noexcept {
  const auto& layout = *static_cast<const PackedLayout*>(state);
  for (std::size_t k = 0; k < count; ++k) {
    const auto* src = static_cast<const unsigned char*>(in) + k * layout.bytes;
    auto* dst = static_cast<unsigned char*>(inout) + k * layout.bytes;
    PackedHeader hin, hout;
    std::memcpy(&hin, src, sizeof hin);
    std::memcpy(&hout, dst, sizeof hout);
    if (hin.agreement != hout.agreement) {
      // The ranks started the generation differently: the layouts may differ too.
      hout.agreement = PackedHeader::kDisagreed;
      std::memcpy(dst, &hout, sizeof hout);
      continue;
    }
    if (hin.error_rank >= 0 || hout.error_rank >= 0) {
      // A failure upstream: keep the lowest failing rank, skip the combine.
      if (hout.error_rank < 0 || (hin.error_rank >= 0 && hin.error_rank < hout.error_rank))
        hout.error_rank = hin.error_rank;
      std::memcpy(dst, &hout, sizeof hout);
      continue;
    }
    try {
      for (const auto& seg : layout.segments)
        seg.combine(seg.state, src + sizeof(PackedHeader) + seg.offset,
                    dst + sizeof(PackedHeader) + seg.offset, seg.count);
    } catch (const std::exception& e) {
      hout.error_rank = layout.rank;
      if (layout.error_text) *layout.error_text = e.what();
      std::memcpy(dst, &hout, sizeof hout);
    } catch (...) {
      hout.error_rank = layout.rank;
      if (layout.error_text) *layout.error_text = "an exception not derived from std::exception";
      std::memcpy(dst, &hout, sizeof hout);
    }
  }
}

}  // namespace tributary::detail
