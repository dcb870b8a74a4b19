import CDynamicRuntime
import Glibc
import Synchronization

/// The immortal parsed form of a signature.
final class SignatureStorage: @unchecked Sendable {
    let encoding: String
    let returnType: TypeEncoding
    let argumentTypes: [TypeEncoding]
    let raw: UnsafeMutablePointer<sf_signature>
    /// Byte offset of each argument inside an invocation's frame, in a table that lives as long
    /// as this (immortal) object: a record reads it through a pointer, with no retain per access.
    let offsetTable: UnsafeMutablePointer<Int>
    /// `offsetTable`, one entry per argument.
    var argumentOffsets: UnsafeBufferPointer<Int> { UnsafeBufferPointer(start: offsetTable, count: argumentTypes.count) }
    let argumentSizes: [Int]
    /// The argument positions (after self and _cmd) holding objects and C strings, which a
    /// retained invocation retains or copies: found once, not by comparing types per call.
    let objectArguments: [Int]
    let cStringArguments: [Int]
    /// Bytes the return value needs (at least a word: libffi widens small integers).
    let returnSize: Int
    /// The return type's facts the forwarding path reads on every call, found once (comparing
    /// `TypeEncoding`s, an enum with payloads, cost a call and a copy each time).
    let returnsObject: Bool
    let returnsVoid: Bool
    /// Bytes a direct libffi call writes for the return (`InvocationStorage.returnValueByteCount`).
    let returnValueBytes: Int
    /// Where the arguments sit in registers and on the stack (x86-64), for the trampoline
    /// entries and direct calls; nil when only libffi can carry the signature.
    let layout: UnsafeMutablePointer<sf_tramp_layout>?
    /// A +1 `InvocationStorage` of this signature that a forwarded call made and nobody kept,
    /// for the next forwarded call to fill (nil: none). One per signature: bounded, and reachable
    /// from this immortal object.
    let spareRecord = AtomicObjectWord<InvocationStorage>()

    /// `written` is the text as the caller spelled it (qualifiers and all), which the errors quote.
    init(encoding: String, written: String, returnType: TypeEncoding, argumentTypes: [TypeEncoding],
         ffiReturn: UnsafeMutablePointer<ffi_type>, ffiArguments: [UnsafeMutablePointer<ffi_type>]) throws(RuntimeError) {
        self.encoding = encoding
        self.returnType = returnType
        self.argumentTypes = argumentTypes
        var offsets: [Int] = []
        var sizes: [Int] = []
        var frame = 0
        for (i, t) in ffiArguments.enumerated() {
            let size = max(Int(sf_ffi_type_size(t)), 1)
            let align = max(Int(sf_ffi_type_alignment(t)), 1)
            // libffi copies by-value arguments onto the calling thread's stack.
            if size > Self.maxArgumentBytes {
                throw .malformedEncoding(.init(actual: written, offset: 0, reason: "argument \(i - 1) is a \(size)-byte struct; arguments are limited to \(Self.maxArgumentBytes) bytes by value (pass a pointer)"))
            }
            frame = (frame + align - 1) / align * align
            offsets.append(frame)
            sizes.append(size)
            frame += size
        }
        if frame > Self.maxFrameBytes {
            throw .malformedEncoding(.init(actual: written, offset: 0, reason: "the arguments take \(frame) bytes; a call is limited to \(Self.maxFrameBytes) bytes of arguments"))
        }
        raw = .allocate(capacity: 1)
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: max(ffiArguments.count, 1))
        for (i, t) in ffiArguments.enumerated() { argv[i] = t }
        offsetTable = .allocate(capacity: max(offsets.count, 1))
        offsetTable.initialize(from: offsets, count: offsets.count)
        argumentSizes = sizes
        objectArguments = argumentTypes.indices.dropFirst(2).filter { argumentTypes[$0].isRetainedObject }
        cStringArguments = argumentTypes.indices.dropFirst(2).filter { argumentTypes[$0] == .cString }
        returnSize = max(Int(sf_ffi_type_size(ffiReturn)), MemoryLayout<UInt64>.size)
        returnsObject = returnType.isRetainedObject
        returnsVoid = returnType == .void
        switch returnType {
        case .void: returnValueBytes = 0
        case .float, .double, .longDouble, .structure: returnValueBytes = Int(sf_ffi_type_size(ffiReturn))
        default: returnValueBytes = MemoryLayout<UInt64>.size
        }

        var key: UInt64 = returnType.keyCode
        if key != 0, argumentTypes.count - 2 <= 11 {
            for (i, t) in argumentTypes.dropFirst(2).enumerated() {
                let code = t.keyCode
                if code == 0 { key = 0; break }
                key |= code << UInt64(5 * (i + 1))
            }
        } else {
            key = 0
        }
        raw.initialize(to: sf_signature())
        raw.pointee.return_type = ffiReturn
        raw.pointee.arg_types = argv
        raw.pointee.types = UnsafePointer(strdup(encoding))
        raw.pointee.key = key
        raw.pointee.nargs = UInt32(ffiArguments.count)
        raw.pointee.frame_size = UInt32(frame)
        let status = sf_ffi_prep_cif(&raw.pointee.cif, UInt32(ffiArguments.count), ffiReturn, argv)
        guard status == FFI_OK else {
            throw .malformedEncoding(.init(actual: written, offset: 0, reason: "libffi cannot prepare a call with these types (status \(status.rawValue))"))
        }
        layout = sf_tramp_layout_create(&raw.pointee.cif)
        raw.pointee.swift = ObjectWord(unretained: self).pointer
    }

    /// The largest argument passed by value (docs/reliability.md, "Limits"): libffi copies
    /// by-value arguments onto the stack, and a thread's stack may be 256 KiB or less.
    static let maxArgumentBytes = 16 * 1024
    /// The largest total of a call's arguments.
    static let maxFrameBytes = 64 * 1024

    /// The key a typed call site computes for itself; equal keys mean compatible signatures.
    var key: UInt64 { raw.pointee.key }
}
