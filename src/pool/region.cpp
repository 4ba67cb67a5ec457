// src/pool/region.cpp — mapping a region down the backing ladder, verified: the pool's
// front-end on the memory core (core/map.hpp maps and verifies, core/hugepages.hpp
// reserves); here the walk, the notes and the exceptions.
#include "physmem/region.hpp"

#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <utility>

#include "core/backing.hpp"
#include "core/fatal.hpp"
#include "core/hugepages.hpp"
#include "core/map.hpp"
#include "core/parse.hpp"
#include "port/os.hpp"

namespace physmem {

namespace {

bool is_pow2(std::size_t x) { return x && !(x & (x - 1)); }

std::string rung_name(Backing b) { return core::rung_name(b); }

// The note for a rung the core could not map.
std::string failure_note(Backing rung, const core::MapResult& r) {
    switch (r.failure) {
        case core::MapFailure::unsupported: return rung_name(rung) + ": page size not supported";
        case core::MapFailure::no_pages:
            return rung_name(rung) + ": " + std::to_string(r.available) + " pages available, " +
                   std::to_string(r.needed) + " needed (" + std::strerror(r.error) + ")";
        case core::MapFailure::thp_off:
            return std::string("thp: transparent huge pages are ") + os::to_string(r.thp);
        default: return rung_name(rung) + ": mmap failed: " + std::strerror(r.error);
    }
}

}  // namespace

Region::Region(const RegionOptions& o) {
    if (o.bytes == 0) throw std::invalid_argument("physmem::Region: size 0");
    if (static_cast<unsigned>(o.backing) > static_cast<unsigned>(Backing::page_4k))
        throw std::invalid_argument("physmem::Region: backing " + std::to_string(static_cast<unsigned>(o.backing)) +
                                    " is not a Backing");
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
    Backing rung = core::first_rung(o.backing, core::BestHugetlb::any_free);
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
    if (o.reserve_huge_pages && core::is_hugetlb(rung)) reserve_for(rung, o.bytes);
    core::MapResult r = core::map_on_rung({.bytes = o.bytes, .alignment = o.alignment, .rung = rung,
                                           .layout = core::Layout::guarded});
    if (!r.mapping.base) {
        notes_.push_back(failure_note(rung, r));
        end_reservation();
        return false;
    }
    base_ = r.mapping.base;
    bytes_ = r.mapping.bytes;
    backing_ = rung;
    return true;
}

// Raises nr_hugepages (root) when the rung is short of pages for `bytes`; says so.
void Region::reserve_for(Backing rung, std::size_t bytes) {
    std::size_t ps = page_size_of(rung);
    long need = static_cast<long>((bytes + ps - 1) / ps);
    HugePageCounts c = huge_page_counts(ps);
    if (!c.supported || c.free - c.reserved >= need) return;
    auto r = std::make_unique<core::HugeReservation>(core::make_available(ps, need));
    if (!r->changed()) return;
    core::say("physmem: reserved huge pages: nr_hugepages (%s) %ld -> %ld (asked +%ld, got +%ld); "
              "restored when its pool is destroyed (the default pool: at exit)\n",
              format_size(ps).c_str(), r->before, r->before + r->added(), need - (c.free - c.reserved), r->added());
    reservation_ = std::move(r);
    if (reservation_->added() == 0) end_reservation();
}

// Writes back the nr_hugepages this region raised; says so.
void Region::end_reservation() noexcept {
    if (!reservation_) return;
    core::Restored r = core::restore_huge_pages(*reservation_, core::Restore::to_before);
    char size[32];
    format_size(size, sizeof size, reservation_->page_size);
    core::say("physmem: restored nr_hugepages (%s) to %ld%s\n", size, r.now,
              r.ok() ? "" : " (FAILED to restore fully)");
    reservation_.reset();
}

Region::~Region() { release(); }

void Region::release() noexcept {
    if (base_) {
        if (locked_) os::unlock(base_, bytes_);
        core::unmap(core::Mapping{base_, bytes_, backing_, core::Layout::guarded});
    }
    base_ = nullptr;
    bytes_ = 0;
    end_reservation();  // after unmapping: the pages are free again
}

void Region::restore_huge_pages() noexcept { end_reservation(); }

void Region::leak() noexcept {
    base_ = nullptr;
    bytes_ = 0;
    prefaulted_ = 0;
    locked_ = false;
    end_reservation();
}

Region::Region(Region&& other) noexcept { *this = std::move(other); }

Region& Region::operator=(Region&& other) noexcept {
    if (this == &other) return *this;
    release();
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    backing_ = other.backing_;
    prefaulted_ = std::exchange(other.prefaulted_, 0);
    locked_ = std::exchange(other.locked_, false);
    reservation_ = std::move(other.reservation_);
    notes_ = std::move(other.notes_);
    return *this;
}

std::size_t Region::reserved_huge_pages() const noexcept {
    return reservation_ ? static_cast<std::size_t>(reservation_->added()) : 0;
}

BackingReport Region::verify() const { return core::verify(base_, backing_); }

}  // namespace physmem
