import CDynamicRuntime
import Glibc

struct InvocationHeader {
    var signature: SignatureStorage
    /// The signature's `offsetTable` and argument count, read per call without touching
    /// (and retaining) the signature.
    let offsets: UnsafePointer<Int>
    let argumentCount: Int
    var target: sf_id?
    var selector: sf_sel
    var argumentsRetained = false
    var ownsReturnObject = false
    /// The return value is a C string in `copiedStrings` (a copy of one lent by the call).
    var ownsReturnString = false
    var copiedStrings: [UnsafeMutablePointer<CChar>] = []
    /// Set for calls captured by a hook: replay calls this IMP, not the hooked method.
    /// Read only; written through `setImplementation`.
    var implementation: IMP?
    /// The hook's published box `implementation` came from (+1), or nil: a throttle's spare
    /// keeps both while emptied, so the next capture of an unchanged original compares one
    /// pointer instead of reading and retaining the IMP again (`HookContext.capture(intoSpare:)`).
    var implementationBox: ObjectWord<IMPBox>?
    let frameOffset: Int
    let returnOffset: Int
    let argvOffset: Int
    /// The signature's argument sizes, a nibble each from argument 0, when every argument is
    /// 1, 2, 4 or 8 bytes at its natural alignment and none is a C string; 0 otherwise
    /// (`InvocationStorage+Words.swift`).
    let plan: UInt64
    /// The positions of object arguments (bit i: argument i), with `plan`.
    let objectMask: UInt64
    /// Set by `emptyForReuse`: nothing retained, copied or returned (a throttle's spare may keep
    /// `implementation` with its box); cleared by the next fill.
    var emptied = false
}

/// The record: a header and, in the same allocation, the frame, return storage and argv.
final class InvocationStorage: ManagedBuffer<InvocationHeader, UInt64> {
    static func make(_ sig: SignatureStorage) -> InvocationStorage {
        let frame = (Int(sig.raw.pointee.frame_size) + 15) & ~15
        let ret = (sig.returnSize + 15) & ~15
        let argv = sig.argumentTypes.count * MemoryLayout<UnsafeMutableRawPointer>.stride
        let words = (frame + ret + argv) / 8 + 2
        let made = InvocationStorage.create(minimumCapacity: words) { _ in
            let (plan, objects) = Self.wordPlan(sig)
            return InvocationHeader(signature: sig, offsets: sig.offsetTable, argumentCount: sig.argumentTypes.count,
                                    target: nil, selector: sf_sel(bitPattern: 1)!,
                                    frameOffset: 0, returnOffset: frame, argvOffset: frame + ret,
                                    plan: plan, objectMask: objects)
        }
        let s = unsafeDowncast(made, to: InvocationStorage.self)
        s.withUnsafeMutablePointerToElements { base in
            let raw = UnsafeMutableRawPointer(base)
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: words * 8)
            let argvPtr = (raw + frame + ret).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            for i in 0..<sig.argumentTypes.count { argvPtr[i] = raw + sig.argumentOffsets[i] }
        }
        return s
    }

    deinit {
        clearReturn()
        releaseRetained()
    }

    /// The header through a pointer: `header` is a class property, and each access to it
    /// paid a dynamic exclusivity check (a tenth of a forwarded call).
    var h: UnsafeMutablePointer<InvocationHeader> { withUnsafeMutablePointerToHeader { $0 } }

    var base: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) }
    }
    /// The argument vector for libffi, rebuilt on every use: libffi's x86-64 ffi_call points the
    /// entries of structs larger than 16 bytes at copies in its own frame, which are dead once
    /// it returns, so a vector that has been called with must not be trusted again.
    var argv: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        let base = self.base
        let v = (base + h.pointee.argvOffset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        let offsets = h.pointee.offsets
        for i in 0..<h.pointee.argumentCount { v[i] = base + offsets[i] }
        return v
    }
    var returnPointer: UnsafeMutableRawPointer { base + h.pointee.returnOffset }
    func argumentPointer(_ i: Int) -> UnsafeMutableRawPointer {
        precondition(i >= 0 && i < h.pointee.argumentCount, "argument index out of range")
        return base + h.pointee.offsets[i]
    }

    func writeTargetAndSelector() {
        argumentPointer(0).storeBytes(of: h.pointee.target, as: sf_id?.self)
        argumentPointer(1).storeBytes(of: h.pointee.selector, as: sf_sel.self)
    }

    /// Copies a live frame's values (borrowed: no retains until `retainArguments`).
    func fill(from arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        h.pointee.emptied = false
        let sig = h.pointee.signature
        for i in 0..<sig.argumentTypes.count {
            argumentPointer(i).copyMemory(from: arguments[i]!, byteCount: sig.argumentSizes[i])
        }
        h.pointee.target = argumentPointer(0).load(as: sf_id?.self)
        h.pointee.selector = argumentPointer(1).load(as: sf_sel.self)
    }

    /// Reuses this record for a new call with the same signature: drops what the previous call
    /// retained, copies the new frame and retains it. Allocates nothing for objects and scalars.
    func refill(from arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let keep = h.pointee.argumentsRetained
        clearReturn()
        releaseRetained()
        fill(from: arguments)
        if keep { retainArguments() }
    }

    /// Retains `o` for a record that may outlive the call; a deallocating object (a capture
    /// made from its dealloc observer) becomes nil: it is freed when the observers return.
    static func retainForCapture(_ o: sf_id?) -> sf_id? {
        guard let o else { return nil }
        if sf_object_flags_inline(o) & UInt32(SF_OBJ_DEALLOCATING) != 0 { return nil }
        sf_retain_inline(o)
        return o
    }

    func setTarget(_ t: sf_id?) {
        var t = t
        if h.pointee.argumentsRetained {
            t = Self.retainForCapture(t)
            if let old = h.pointee.target { sf_release_inline(old) }
        }
        h.pointee.target = t
        writeTargetAndSelector()
    }

    func setArgument(_ i: Int, type: TypeEncoding, _ write: (UnsafeMutableRawPointer) -> Void) {
        let p = argumentPointer(i)
        if type == .cString {
            // A string lent by the write (a Swift String) would die with the caller's send.
            let lent = sf_lent_mark()
            write(p)
            if h.pointee.argumentsRetained || sf_lent_mark() > lent { adoptCopy(at: p) }
            sf_lent_drain(lent)
            return
        }
        guard h.pointee.argumentsRetained else {
            write(p)
            return
        }
        switch type {
        case .object, .block:
            let old = p.load(as: sf_id?.self)
            write(p)
            p.storeBytes(of: Self.retainForCapture(p.load(as: sf_id?.self)), as: sf_id?.self)
            if let old { sf_release_inline(old) }
        default:
            write(p)
        }
    }

    /// Replaces the C string at `p` with a copy the record owns.
    @discardableResult
    func adoptCopy(at p: UnsafeMutableRawPointer) -> Bool {
        guard let s = p.load(as: UnsafePointer<CChar>?.self), let copy = strdup(s) else { return false }
        h.pointee.copiedStrings.append(copy)
        p.storeBytes(of: UnsafePointer(copy), as: UnsafePointer<CChar>?.self)
        return true
    }

    /// After a call or a write of the return value: a C string lent since `lent` (a Swift
    /// String's) becomes the record's own copy, and the lent ones are freed.
    func adoptLentReturn(since lent: Int) {
        if sf_lent_mark() > lent, h.pointee.signature.returnType == .cString {
            h.pointee.ownsReturnString = adoptCopy(at: returnPointer)
        }
        sf_lent_drain(lent)
    }

    func retainArguments() {
        guard !h.pointee.argumentsRetained else { return }
        h.pointee.argumentsRetained = true
        if h.pointee.target != nil {
            h.pointee.target = Self.retainForCapture(h.pointee.target)
            if h.pointee.target == nil { writeTargetAndSelector() }
        }
        let sig = h.pointee.signature
        for i in sig.objectArguments {
            let p = argumentPointer(i)
            p.storeBytes(of: Self.retainForCapture(p.load(as: sf_id?.self)), as: sf_id?.self)
        }
        for i in sig.cStringArguments { adoptCopy(at: argumentPointer(i)) }
    }

    /// Sets the IMP a replay calls and the box it was read from (+1, or nil), releasing the old box.
    func setImplementation(_ imp: IMP?, box: ObjectWord<IMPBox>? = nil) {
        if let old = h.pointee.implementationBox { old.release() }
        h.pointee.implementationBox = box
        h.pointee.implementation = imp
    }

    func releaseRetained() {
        setImplementation(nil)
        // Strings set or returned on a record that does not retain its arguments are copies too.
        if !h.pointee.copiedStrings.isEmpty {
            for s in h.pointee.copiedStrings { free(s) }
            h.pointee.copiedStrings.removeAll(keepingCapacity: true)
        }
        guard h.pointee.argumentsRetained else { return }
        h.pointee.argumentsRetained = false
        if let t = h.pointee.target { sf_release_inline(t) }
        for i in h.pointee.signature.objectArguments {
            if let o = argumentPointer(i).load(as: sf_id?.self) { sf_release_inline(o) }
        }
    }

    /// Drops an object the return storage owns and zeroes it.
    func clearReturn() {
        if h.pointee.ownsReturnObject, let o = returnPointer.load(as: sf_id?.self) {
            sf_release_inline(o)
        }
        h.pointee.ownsReturnObject = false
        h.pointee.ownsReturnString = false
        let size = signature.withObject { $0.returnSize }
        if size <= 16 {
            // The return area is at least 16 bytes (`make`): two stores instead of a memset call.
            returnPointer.storeBytes(of: (0, 0) as (UInt64, UInt64), as: (UInt64, UInt64).self)
        } else {
            returnPointer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        }
    }

    /// Calls `imp` with the frame; the result (+1 for objects) lands in return storage.
    func call(_ imp: sf_imp) {
        signature.withObject { sig in
            if let layout = sig.layout, layout.pointee.int_wide != 0, sf_tramp_enabled() != 0 {
                callWords(imp, layout)
            } else {
                writeTargetAndSelector()
                sig.call(imp, returnPointer, argv)
            }
            h.pointee.ownsReturnObject = sig.returnsObject
        }
    }

    /// The record's signature, unretained: the record holds it, and signatures are immortal.
    var signature: ObjectWord<SignatureStorage> { ObjectWord(unretained: h.pointee.signature) }

    /// `call` for a signature of 2-5 word arguments in integer registers and a word return or
    /// none (`int_wide`): its frame is those words in order, so the IMP is called as a C
    /// function with them: no argument vector, no `sf_tramp_call_args`.
    private func callWords(_ imp: sf_imp, _ layout: UnsafeMutablePointer<sf_tramp_layout>) {
        let w = base.assumingMemoryBound(to: UInt64.self)
        w[0] = UInt64(UInt(bitPattern: h.pointee.target))
        w[1] = UInt64(UInt(bitPattern: h.pointee.selector))
        let n = Int(layout.pointee.nargs)
        typealias Words = @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64) -> UInt64
        let v = CFunction.cast(imp, to: Words.self)(w[0], w[1], n > 2 ? w[2] : 0, n > 3 ? w[3] : 0, n > 4 ? w[4] : 0)
        if layout.pointee.ret_kind != UInt8(SF_RET_VOID) { returnPointer.storeBytes(of: v, as: UInt64.self) }
    }

    /// Bytes a direct libffi call writes for this return type, which is all a caller's storage
    /// must hold: a word for integers and pointers (ffi_arg), 4 for a float, a struct's own
    /// size, nothing for void. `returnSize` rounds up to a word and would overrun a C caller's
    /// `float` or 3-byte struct.
    var returnValueByteCount: Int { signature.withObject { $0.returnValueBytes } }

    /// Copies the return value out to a caller (`byteCount` bytes: a C caller's buffer holds
    /// exactly the type), giving it its own +1 for objects.
    func copyReturn(to destination: UnsafeMutableRawPointer, byteCount: Int? = nil) {
        destination.copyMemory(from: returnPointer, byteCount: byteCount ?? returnValueByteCount)
        if h.pointee.ownsReturnString, let s = returnPointer.load(as: UnsafePointer<CChar>?.self) {
            // The caller may outlive the record: it gets a copy lent to its thread.
            destination.storeBytes(of: sf_lend_string(strdup(s)), as: UnsafePointer<CChar>?.self)
        }
        if signature.withObject({ $0.returnsObject }), let o = returnPointer.load(as: sf_id?.self) {
            if h.pointee.ownsReturnObject {
                // Ownership moves to the caller.
                h.pointee.ownsReturnObject = false
                returnPointer.storeBytes(of: nil, as: sf_id?.self)
            } else {
                sf_retain_inline(o)
            }
        }
    }
}

extension SignatureStorage {
    /// Calls `imp` with the arguments `argv` points at: directly with the same registers
    /// (`sf_tramp_call_args`) where the layout allows and trampolines are on, else `ffi_call`.
    /// The return value lands in `ret` as libffi would leave it (small integers widened).
    func call(_ imp: sf_imp, _ ret: UnsafeMutableRawPointer, _ argv: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        if let layout, sf_tramp_enabled() != 0 {
            sf_tramp_call_args(layout, CFunction.address(of: imp), ret, argv)
        } else {
            sf_ffi_call(&raw.pointee.cif, imp, ret, argv)
        }
    }
}
