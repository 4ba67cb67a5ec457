// src/pool/page_filler.cpp — the intrusive lists of page_filler.hpp.
#include "page_filler.hpp"

namespace physmem {

void BlockPool::Filler::push_front(int list, Page* p) noexcept {
    p->list = list;
    p->prev = nullptr;
    p->next = head_[list];
    if (p->next) p->next->prev = p;
    else tail_[list] = p;
    head_[list] = p;
    nonempty_ |= std::uint64_t{1} << list;
}

void BlockPool::Filler::add_back(Page* p) noexcept {
    int list = list_for(*p);
    if (list < 0) return;
    p->list = list;
    p->next = nullptr;
    p->prev = tail_[list];
    if (p->prev) p->prev->next = p;
    else head_[list] = p;
    tail_[list] = p;
    nonempty_ |= std::uint64_t{1} << list;
}

void BlockPool::Filler::unlink(Page* p) noexcept {
    if (p->list < 0) return;
    int list = p->list;
    if (p->prev) p->prev->next = p->next;
    else head_[list] = p->next;
    if (p->next) p->next->prev = p->prev;
    else tail_[list] = p->prev;
    if (!head_[list]) nonempty_ &= ~(std::uint64_t{1} << list);
    p->prev = p->next = nullptr;
    p->list = -1;
}

}  // namespace physmem
