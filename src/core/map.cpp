// src/core/map.cpp — one rung of the ladder: hugetlb, or an anonymous mapping advised
// huge or not; and the smaps check of the result.
#include "core/map.hpp"

#include <cerrno>

#include "core/backing.hpp"
#include "physmem/hugepages.hpp"

namespace physmem::core {

namespace {

std::size_t round_up(std::size_t x, std::size_t to) noexcept { return (x + to - 1) / to * to; }

MapResult map_hugetlb(const MapRequest& r, std::size_t ps) noexcept {
    MapResult out;
    std::size_t bytes = round_up(r.bytes, ps);
    out.needed = static_cast<long>(bytes / ps);
    if (!huge_page_counts(ps).supported) { out.failure = MapFailure::unsupported; return out; }
    void* p = os::map_hugetlb(bytes, ps, r.alignment);
    if (!p) {
        out.failure = MapFailure::no_pages;
        out.error = errno;
        out.available = available_huge_pages(ps);
        return out;
    }
    out.mapping = Mapping{static_cast<std::byte*>(p), bytes, r.rung, r.layout};
    return out;
}

MapResult map_anonymous(const MapRequest& r, std::size_t ps) noexcept {
    MapResult out;
    std::size_t bytes = round_up(r.bytes, ps);
    std::size_t align = r.alignment > ps ? r.alignment : ps;
    bool guarded = r.layout == Layout::guarded;
    out.thp = guarded ? os::thp_mode() : os::ThpMode::absent;
    if (guarded && r.rung == Backing::thp && (out.thp == os::ThpMode::absent || out.thp == os::ThpMode::never)) {
        out.failure = MapFailure::thp_off;
        return out;
    }
    void* p = guarded ? os::map_aligned(bytes, align) : os::map_reserve(bytes, align);
    if (!p) { out.failure = MapFailure::mmap_failed; out.error = errno; return out; }
    Backing rung = r.rung;
    if (guarded && out.thp != os::ThpMode::absent) {
        os::advise_huge(p, bytes, rung == Backing::thp);
    } else if (!guarded && os::advise_huge(p, bytes, rung == Backing::thp) != 0 && rung == Backing::thp) {
        rung = Backing::page_4k;  // the kernel refused MADV_HUGEPAGE (no THP): say so, refuse THP
        os::advise_huge(p, bytes, false);
    }
    out.mapping = Mapping{static_cast<std::byte*>(p), bytes, rung, r.layout};
    return out;
}

}  // namespace

MapResult map_on_rung(const MapRequest& r) noexcept {
    std::size_t ps = page_size_of(r.rung);
    return is_hugetlb(r.rung) ? map_hugetlb(r, ps) : map_anonymous(r, ps);
}

void unmap(const Mapping& m) noexcept {
    if (!m.base) return;
    if (is_hugetlb(m.rung) || m.layout == Layout::lean) os::unmap(m.base, m.bytes);
    else os::unmap_aligned(m.base, m.bytes);
}

BackingReport verify(const void* base, Backing rung) noexcept {
    BackingReport r;
    os::SmapsEntry e = os::smaps_entry(base);
    if (!e.found) return r;
    r.kernel_page_size = e.kernel_page_size;
    r.resident_bytes = e.rss ? e.rss : e.hugetlb;
    if (e.kernel_page_size == page_size_of(Backing::page_1g)) r.backing = Backing::page_1g;
    else if (e.kernel_page_size == page_size_of(Backing::page_2m)) r.backing = Backing::page_2m;
    else if (e.anon_huge > 0 || (rung == Backing::thp && e.thp_eligible)) r.backing = Backing::thp;
    r.huge_bytes = e.hugetlb ? e.hugetlb : e.anon_huge;
    r.verified = r.backing == rung && (rung != Backing::thp || e.anon_huge > 0);
    return r;
}

}  // namespace physmem::core
