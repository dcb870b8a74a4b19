// libffi calls that are awkward from Swift: macros, type globals and closure plumbing.
#include "sf_private.h"
#include <stdlib.h>
#if defined(__x86_64__) && defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

ffi_type *sf_ffi_type_for_code(char code) {
    switch (code) {
#define SF_TYPE_CODE(character, key, ffi, swift) case character: return &ffi;
#include "sf_type_codes.h"
#undef SF_TYPE_CODE
    default: return NULL;
    }
}

uint8_t sf_type_code_key(char code) {
    switch (code) {
#define SF_TYPE_CODE(character, key, ffi, swift) case character: return key;
#include "sf_type_codes.h"
#undef SF_TYPE_CODE
    default: return 0;
    }
}

static const char type_code_characters[] = {
#define SF_TYPE_CODE(character, key, ffi, swift) character,
#include "sf_type_codes.h"
#undef SF_TYPE_CODE
};

size_t sf_type_code_count(void) { return sizeof type_code_characters; }

char sf_type_code_character(size_t index) {
    return index < sizeof type_code_characters ? type_code_characters[index] : 0;
}

ffi_type *sf_ffi_make_struct(ffi_type **elements, size_t count) {
    ffi_type *t = calloc(1, sizeof(ffi_type));
    ffi_type **els = calloc(count + 1, sizeof(ffi_type *));
    if (!t || !els) { free(t); free(els); return NULL; }
    for (size_t i = 0; i < count; i++) els[i] = elements[i];
    t->type = FFI_TYPE_STRUCT;
    t->elements = els;
    // Let libffi compute size and alignment.
    ffi_cif probe;
    if (ffi_prep_cif(&probe, FFI_DEFAULT_ABI, 0, t, NULL) != FFI_OK) { free(els); free(t); return NULL; }
    return t;
}

ffi_status sf_ffi_prep_cif(ffi_cif *cif, unsigned nargs, ffi_type *rtype, ffi_type **atypes) {
    return ffi_prep_cif(cif, FFI_DEFAULT_ABI, nargs, rtype, atypes);
}

#if defined(__x86_64__) && defined(__linux__)
/* The fallback's libffi closures, W^X: Debian's libffi (no static trampolines) maps its
 * closures writable and executable at once. Here each closure gets a page of its own, written
 * while read+write and made read+execute before anyone can call it. libffi's x86-64 closure
 * finds its words PC-relatively (the trampoline sits at the closure's start), so the code
 * address is the closure's own; a zeroed page also reads "no static trampoline" to a libffi
 * built with them. A page per closure: the fallback serves the few signatures the trampoline
 * entries do not carry (long double, _Complex) and SF_TRAMPOLINES=0. */
_Static_assert(sizeof(ffi_closure) <= 4096, "a closure fits in its page");

static size_t closure_page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

void *sf_ffi_closure_alloc(void **code) {
    void *p = mmap(NULL, closure_page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    *code = p;
    return p;
}

ffi_status sf_ffi_prep_closure(void *closure, ffi_cif *cif,
                               void (*fun)(ffi_cif *, void *, void **, void *),
                               void *user_data, void *code) {
    if (code != closure) return FFI_BAD_ABI;
    ffi_status status = ffi_prep_closure_loc(closure, cif, fun, user_data, code);
    if (status != FFI_OK) return status;
    return mprotect(closure, closure_page(), PROT_READ | PROT_EXEC) == 0 ? FFI_OK : FFI_BAD_ABI;
}

void sf_ffi_closure_free(void *closure) {
    if (closure) munmap(closure, closure_page());
}
#else
void *sf_ffi_closure_alloc(void **code) { return ffi_closure_alloc(sizeof(ffi_closure), code); }

ffi_status sf_ffi_prep_closure(void *closure, ffi_cif *cif,
                               void (*fun)(ffi_cif *, void *, void **, void *),
                               void *user_data, void *code) {
    return ffi_prep_closure_loc(closure, cif, fun, user_data, code);
}

void sf_ffi_closure_free(void *closure) { ffi_closure_free(closure); }
#endif

void sf_ffi_call(ffi_cif *cif, sf_imp fn, void *rvalue, void **avalue) {
    ffi_call(cif, FFI_FN(fn), rvalue, avalue);
}

size_t sf_ffi_type_size(ffi_type *t) { return t->size; }

size_t sf_ffi_type_alignment(ffi_type *t) { return t->alignment; }
