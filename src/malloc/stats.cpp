// src/malloc/stats.cpp — pm_stats: the heap's counters (heap.hpp, Heap) read under the
// heap lock, and the bytes live large objects asked for (large.cpp). Purges what is due
// first, as every span operation does, so the figures show the heap after it. The sparse
// arenas' pages (4 KiB, resident where the program touched them) are counted by asking the
// kernel (mincore, one call per 2 MiB in use there), not from the counters.
#include "malloc/heap.hpp"
#include "port/os.hpp"

namespace physmem::malloc {

namespace {

// Bytes resident in the in-use 2 MiB pages of the sparse arenas.
std::size_t sparse_resident_bytes() noexcept {
    if (H.sparse_in_use == 0) return 0;
    std::size_t pages = 0;
    for (unsigned i = 0; i < H.narenas; ++i) {
        const Arena* a = H.arenas[i];
        if (!a->sparse) continue;
        for (unsigned k = 0; k < a->nhuge; ++k) {
            if (a->hp[k].state != HugePage::large) continue;
            std::size_t n = os::resident_pages(reinterpret_cast<void*>(a->hp[k].base()), kHuge);
            pages += n == SIZE_MAX ? kPagesPerHuge : n;  // refused: counted whole
        }
    }
    return pages * kPage;
}

}  // namespace

void heap_stats(pm_stats_t* out) noexcept {
    LockGuard g(H.lock);
    maybe_purge(false);
    std::memset(out, 0, sizeof *out);
    out->version = PM_STATS_VERSION;
    out->backing = static_cast<std::uint32_t>(H.last_rung);
    out->bytes_mapped = H.bytes_mapped;
    out->bytes_requested_large = large_requested_bytes();
    out->bytes_in_use = H.bytes_in_use + H.direct_bytes;
    // THP arenas are on 4 KiB pages until thp_when_big turns them huge.
    // Pages kept on 4 KiB pages once they are huge (advise_small) count as small.
    std::size_t kept = std::min(H.no_thp_pages, H.in_use_by_rung[3]);
    std::size_t thp = H.thp_on ? H.in_use_by_rung[3] - kept : 0;
    std::size_t small = H.in_use_by_rung[4] + (H.thp_on ? kept : H.in_use_by_rung[3]);
    std::size_t huge_in_use = H.in_use_by_rung[1] + H.in_use_by_rung[2] + thp;
    std::size_t direct_huge = g_opt.backing == Rung::page_4k ? 0 : H.direct_bytes & ~(kHuge - 1);
    out->bytes_huge = huge_in_use * kHuge + direct_huge;
    out->bytes_resident_est = (huge_in_use + small + H.empty.size()) * kHuge + H.direct_bytes +
                              sparse_resident_bytes();
    out->hugetlb_1g_pages = H.n1g;
    out->hugetlb_2m_pages = H.n2m;
    out->thp_pages_in_use = thp;
    out->small_pages_in_use = small;
    out->huge_pages_empty = H.empty.size();
    out->bytes_purged = H.purged_bytes;
    out->purges = H.purges;
    out->arenas = H.narenas;
    out->direct_mappings = H.direct_count;
    out->bytes_direct = H.direct_bytes;
    out->discard_failures = H.discard_failures;
    out->lock_failures = H.lock_failures;
    out->bytes_reserved_hugetlb = H.reserved > 0 ? static_cast<std::size_t>(H.reserved) * H.reserved_page : 0;
}

}  // namespace physmem::malloc
