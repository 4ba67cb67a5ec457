// src/pool/region.cpp — mapping a region down the backing ladder, verified.
#include "physmem/region.hpp"

#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <utility>

#include "physmem/hugepages.hpp"
#include "physmem/options.hpp"
#include "port/os.hpp"

namespace physmem {

namespace {

std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

bool is_pow2(std::size_t x) { return x && !(x & (x - 1)); }

std::string rung_name(Backing b) { return std::string(to_string(b)); }

}  // namespace

Region::Region(const RegionOptions& o) {
    if (o.bytes == 0) throw std::invalid_argument("physmem::Region: size 0");
    if (!is_pow2(o.alignment)) throw std::invalid_argument("physmem::Region: alignment not a power of two");
    map_with_ladder(o);
    if (o.prefault) {
        int rc = os::populate_write(base_, bytes_, page_size());
        if (rc == 0) prefaulted_ = bytes_;
        else notes_.push_back("prefault failed: " + std::string(std::strerror(rc)));
    }
    if (o.prefault && backing_ == Backing::thp && verify().huge_bytes == 0) {
        notes_.push_back("thp: kernel gave 4 KiB pages (AnonHugePages 0 after prefault)");
        backing_ = Backing::page_4k;
        if (o.strict_backing) { release(); throw backing_unavailable("physmem: thp requested, 4 KiB pages obtained"); }
    }
    if (o.lock) {
        int rc = os::lock(base_, bytes_);
        if (rc != 0) {
            release();
            throw std::system_error(rc, std::generic_category(), "physmem: mlock of region (raise RLIMIT_MEMLOCK?)");
        }
        locked_ = true;
    }
}

void Region::map_with_ladder(const RegionOptions& o) {
    Backing rung = o.backing == Backing::best ? Backing::page_1g : o.backing;
    for (;;) {
        if (try_rung(rung, o)) return;
        if (o.strict_backing) {
            std::string why = notes_.empty() ? "" : ": " + notes_.back();
            throw backing_unavailable("physmem: backing " + rung_name(rung) + " unavailable" + why);
        }
        if (rung == Backing::page_4k) throw std::bad_alloc();
        rung = next_rung(rung);
    }
}

bool Region::try_rung(Backing rung, const RegionOptions& o) {
    std::size_t ps = page_size_of(rung);
    std::size_t bytes = round_up(o.bytes, ps);
    void* p = nullptr;
    if (rung == Backing::page_1g || rung == Backing::page_2m) {
        long need = static_cast<long>(bytes / ps);
        HugePageCounts c = huge_page_counts(ps);
        if (!c.supported) { notes_.push_back(rung_name(rung) + ": page size not supported"); return false; }
        if (o.reserve_huge_pages && c.free - c.reserved < need) {
            auto r = std::make_unique<HugePageReservation>(ps, need);
            if (r->obtained() > 0) reservation_ = std::move(r);
        }
        p = os::map_hugetlb(bytes, ps, o.alignment);
        if (!p) {
            HugePageCounts now = huge_page_counts(ps);
            notes_.push_back(rung_name(rung) + ": " + std::to_string(now.free - now.reserved) +
                             " pages available, " + std::to_string(need) + " needed (" +
                             std::strerror(errno) + ")");
            reservation_.reset();
            return false;
        }
        map_base_ = static_cast<std::byte*>(p);
        map_bytes_ = bytes;
    } else {
        std::string mode = os::thp_mode();
        if (rung == Backing::thp && (mode.empty() || mode == "never")) {
            notes_.push_back("thp: transparent huge pages are " + (mode.empty() ? std::string("absent") : mode));
            return false;
        }
        p = os::map_aligned(bytes, std::max(o.alignment, ps));
        if (!p) { notes_.push_back(rung_name(rung) + ": mmap failed: " + std::strerror(errno)); return false; }
        map_base_ = static_cast<std::byte*>(p);
        map_bytes_ = bytes;
        if (!mode.empty()) os::advise_huge(p, bytes, rung == Backing::thp);
    }
    base_ = map_base_;
    bytes_ = map_bytes_;
    backing_ = rung;
    return true;
}

Region::~Region() { release(); }

void Region::release() noexcept {
    if (map_base_) {
        if (locked_) os::unlock(base_, bytes_);
        if (backing_ == Backing::page_1g || backing_ == Backing::page_2m) os::unmap(map_base_, map_bytes_);
        else os::unmap_aligned(map_base_, map_bytes_);
    }
    map_base_ = base_ = nullptr;
    map_bytes_ = bytes_ = 0;
    reservation_.reset();  // after unmapping: the pages are free again
}

Region::Region(Region&& other) noexcept { *this = std::move(other); }

Region& Region::operator=(Region&& other) noexcept {
    if (this == &other) return *this;
    release();
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    map_base_ = std::exchange(other.map_base_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    backing_ = other.backing_;
    prefaulted_ = std::exchange(other.prefaulted_, 0);
    locked_ = std::exchange(other.locked_, false);
    reservation_ = std::move(other.reservation_);
    notes_ = std::move(other.notes_);
    return *this;
}

std::size_t Region::reserved_huge_pages() const noexcept {
    return reservation_ ? static_cast<std::size_t>(reservation_->obtained()) : 0;
}

BackingReport Region::verify() const {
    BackingReport r;
    os::SmapsEntry e = os::smaps_entry(base_);
    if (!e.found) return r;
    r.kernel_page_size = e.kernel_page_size;
    r.resident_bytes = e.rss ? e.rss : e.hugetlb;
    if (e.kernel_page_size == page_size_of(Backing::page_1g)) r.backing = Backing::page_1g;
    else if (e.kernel_page_size == page_size_of(Backing::page_2m)) r.backing = Backing::page_2m;
    else if (e.anon_huge > 0 || (backing_ == Backing::thp && e.thp_eligible)) r.backing = Backing::thp;
    r.huge_bytes = e.hugetlb ? e.hugetlb : e.anon_huge;
    r.verified = r.backing == backing_ && (backing_ != Backing::thp || e.anon_huge > 0);
    return r;
}

}  // namespace physmem
