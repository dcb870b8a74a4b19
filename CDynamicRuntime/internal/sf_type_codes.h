/*
 * The scalar type codes, one row each:
 *   SF_TYPE_CODE(character in an encoding, 5-bit code in a signature's packed key, libffi type,
 *                TypeEncoding case)
 * The one source of the table: C includes it (as an X-macro) wherever it needs a column, and
 * scripts/generate-type-codes.py writes Swift's switches from it
 * (Sources/DynamicRuntime/Model/TypeEncoding+Codes.swift; CI runs it with --check). Struct
 * (`{...}`) types have no row: their libffi type is built from their fields, their key code is 0.
 */
SF_TYPE_CODE('v', 1, ffi_type_void, void)
SF_TYPE_CODE('c', 2, ffi_type_sint8, int8)
SF_TYPE_CODE('C', 3, ffi_type_uint8, uint8)
SF_TYPE_CODE('s', 4, ffi_type_sint16, int16)
SF_TYPE_CODE('S', 5, ffi_type_uint16, uint16)
SF_TYPE_CODE('i', 6, ffi_type_sint32, int32)
SF_TYPE_CODE('I', 7, ffi_type_uint32, uint32)
SF_TYPE_CODE('l', 8, ffi_type_slong, long)
SF_TYPE_CODE('L', 9, ffi_type_ulong, unsignedLong)
SF_TYPE_CODE('q', 8, ffi_type_sint64, int64)
SF_TYPE_CODE('Q', 9, ffi_type_uint64, uint64)
SF_TYPE_CODE('f', 10, ffi_type_float, float)
SF_TYPE_CODE('d', 11, ffi_type_double, double)
SF_TYPE_CODE('B', 12, ffi_type_uint8, bool)
SF_TYPE_CODE('*', 13, ffi_type_pointer, cString)
SF_TYPE_CODE('@', 14, ffi_type_pointer, object)
SF_TYPE_CODE('#', 15, ffi_type_pointer, classObject)
SF_TYPE_CODE(':', 16, ffi_type_pointer, selector)
SF_TYPE_CODE('^', 17, ffi_type_pointer, pointer)
SF_TYPE_CODE('D', 18, ffi_type_longdouble, longDouble)
