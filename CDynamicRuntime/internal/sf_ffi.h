/*
 * SelectorForwarding — libffi helpers awkward in Swift, and the type-code table.
 * Part of sf_private.h: include that header, which sets visibility and linkage around this one.
 */
#ifndef SF_FFI_H
#define SF_FFI_H
#ifndef SF_PRIVATE_H
#error "include sf_private.h"
#endif

/* ---- libffi helpers awkward in Swift ---- */

/* The table of scalar type codes (sf_type_codes.h): libffi type and key code of a code
 * character (NULL / 0 for none), and the rows in order, for Swift's check of its own copy. */
ffi_type *sf_ffi_type_for_code(char code);
uint8_t sf_type_code_key(char code);
size_t sf_type_code_count(void);
char sf_type_code_character(size_t index);
ffi_type *sf_ffi_make_struct(ffi_type **elements, size_t count);
ffi_status sf_ffi_prep_cif(ffi_cif *cif, unsigned nargs, ffi_type *rtype, ffi_type **atypes);
void *sf_ffi_closure_alloc(void **code);
ffi_status sf_ffi_prep_closure(void *closure, ffi_cif *cif,
                               void (*fun)(ffi_cif *, void *, void **, void *),
                               void *user_data, void *code);
void sf_ffi_closure_free(void *closure);
void sf_ffi_call(ffi_cif *cif, sf_imp fn, void *rvalue, void **avalue);
size_t sf_ffi_type_size(ffi_type *t);
size_t sf_ffi_type_alignment(ffi_type *t);

#endif
