// placeholder while scan is written
#include "context.hpp"
int main(int argc, char** argv) {
    static const lab::ProgramSpec spec{.name = "physmem_lab_scan", .experiment = "scan", .unit = "element",
                                       .kinds = {lab::Kind::array}, .params = {}};
    return lab::run(spec, argc, argv, [](lab::Context& ctx) {
        auto a = ctx.array<std::uint32_t>("data", ctx.settings().size_bytes / 4);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = i;
        ctx.measure(a.size(), [&] { std::uint64_t s = 0; for (auto x : a) s += x; return s; });
        ctx.verify(true, "x");
    });
}
