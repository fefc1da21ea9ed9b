/* Master-side callbacks for the compliance tests: a variadic FMI 2.0 logger (Rust cannot
 * define C-variadic functions on stable) and a counting allocator.
 *
 * The logger formats like a real master (vsnprintf with the FMU's format) and hands both the
 * raw format and the formatted text to a sink set from Rust, so a test can check that the FMU
 * passes "%s" and that a '%' in a message arrives verbatim. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*plenum_test_sink)(void *env, const char *instance, int status,
                                 const char *category, const char *format,
                                 const char *text);

static _Atomic(plenum_test_sink) sink = NULL;
static atomic_long live_allocations = 0;
static atomic_long total_allocations = 0;

void plenum_test_set_sink(plenum_test_sink s) { atomic_store(&sink, s); }

void plenum_test_logger(void *env, const char *instance, int status,
                        const char *category, const char *message, ...) {
  va_list args, copy;
  va_start(args, message);
  va_copy(copy, args);
  int n = vsnprintf(NULL, 0, message, copy);
  va_end(copy);
  char *text = NULL;
  if (n >= 0) {
    text = malloc((size_t)n + 1);
    if (text) vsnprintf(text, (size_t)n + 1, message, args);
  }
  va_end(args);
  plenum_test_sink s = atomic_load(&sink);
  if (s) s(env, instance, status, category, message, text ? text : "<vsnprintf failed>");
  free(text);
}

void *plenum_test_calloc(size_t nobj, size_t size) {
  void *p = calloc(nobj, size);
  if (p) {
    atomic_fetch_add(&live_allocations, 1);
    atomic_fetch_add(&total_allocations, 1);
  }
  return p;
}

void plenum_test_free(void *p) {
  if (p) atomic_fetch_sub(&live_allocations, 1);
  free(p);
}

long plenum_test_live_allocations(void) { return atomic_load(&live_allocations); }
long plenum_test_total_allocations(void) { return atomic_load(&total_allocations); }
