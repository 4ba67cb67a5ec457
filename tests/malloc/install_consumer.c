/* tests/malloc/install_consumer.c — a C program built against an installed libphysmem.so
 * (scripts/test.sh step 3: cc ... $(pkg-config --cflags --libs physmem-malloc)). Linked,
 * the library also serves plain malloc/free. Exits 0 when everything works. */
#include <physmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char* a = pm_malloc(1000);
    char* b = malloc(3 << 20); /* linked first: malloc is physmem's too */
    if (!a || !b) return 1;
    memset(a, 1, 1000);
    memset(b, 2, 3 << 20);
    pm_stats_t s;
    pm_stats(&s);
    int ok = s.version == PM_STATS_VERSION && pm_usable_size(a) >= 1000 &&
             pm_usable_size(b) >= (3u << 20) && s.bytes_requested_large >= (3u << 20);
    printf("pm_consumer: version %u, in use %zu KiB, large requested %zu KiB: %s\n", s.version,
           s.bytes_in_use >> 10, s.bytes_requested_large >> 10, ok ? "ok" : "WRONG");
    pm_free(a);
    free(b);
    return ok ? 0 : 1;
}
