/*
 * The scalar type codes, one row each:
 *   SF_TYPE_CODE(character in an encoding, 5-bit code in a signature's packed key, libffi type)
 * Included (as an X-macro) wherever C needs one of the columns. Swift's copy is
 * TypeEncoding.scalarCode (Sources/DynamicRuntime/Model/TypeEncoding+Codes.swift);
 * TypeCodeTableTests checks that both list the same rows. Struct (`{...}`) types have no row:
 * their libffi type is built from their fields and their key code is 0.
 */
SF_TYPE_CODE('v', 1, ffi_type_void)
SF_TYPE_CODE('c', 2, ffi_type_sint8)
SF_TYPE_CODE('C', 3, ffi_type_uint8)
SF_TYPE_CODE('s', 4, ffi_type_sint16)
SF_TYPE_CODE('S', 5, ffi_type_uint16)
SF_TYPE_CODE('i', 6, ffi_type_sint32)
SF_TYPE_CODE('I', 7, ffi_type_uint32)
SF_TYPE_CODE('l', 8, ffi_type_slong)
SF_TYPE_CODE('L', 9, ffi_type_ulong)
SF_TYPE_CODE('q', 8, ffi_type_sint64)
SF_TYPE_CODE('Q', 9, ffi_type_uint64)
SF_TYPE_CODE('f', 10, ffi_type_float)
SF_TYPE_CODE('d', 11, ffi_type_double)
SF_TYPE_CODE('B', 12, ffi_type_uint8)
SF_TYPE_CODE('*', 13, ffi_type_pointer)
SF_TYPE_CODE('@', 14, ffi_type_pointer)
SF_TYPE_CODE('#', 15, ffi_type_pointer)
SF_TYPE_CODE(':', 16, ffi_type_pointer)
SF_TYPE_CODE('^', 17, ffi_type_pointer)
SF_TYPE_CODE('D', 18, ffi_type_longdouble)
