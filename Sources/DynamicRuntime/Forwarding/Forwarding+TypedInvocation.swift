import CDynamicRuntime

/// Stage 3 for a typed send whose types its key names exactly: the caller's values are stored
/// straight into the invocation record, with no frame laid out, checked and copied in between.
extension Forwarding {
    /// How a typed stage 3 ended: the result's bytes, or a class that declares another
    /// signature than the caller's (`methodSignatureForSelector:` already asked, once), which
    /// takes the frame path to check the caller's values against it.
    enum TypedInvocationOutcome {
        case returned(UInt64, UInt64)
        case declared(handler: sf_method_t, Signature)
        /// No `forwardInvocation:`, and a forward handler is installed: the frame path asks it.
        case forwardHandler
    }

    /// Stages 3 and 4 for `sig`, the caller's own signature: the record is filled by `store`,
    /// handed to `forwardInvocation:`, and its return value (at most 16 bytes: a scalar the key
    /// names) comes back as bits. The caller holds a depth level and a read section.
    static func typedInvocationStages(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, _ sig: UnsafePointer<sf_signature>,
                                      count: Int, store: (Int, UnsafeMutableRawPointer) -> Void) throws(RuntimeError) -> TypedInvocationOutcome {
        try lateStages(raw, selector, cls: cls,
                       invocation: { (handler) throws(RuntimeError) in
                           try typedInvocationStage(raw, selector, cls: cls, sig, handler: handler, count: count, store: store)
                       },
                       // The handler's stage is in `invocationStages`, which the frame path runs.
                       forwardHandler: { ForwardHandler.current != nil ? .forwardHandler : nil })
    }

    /// Stage 3 once `forwardInvocation:` is found (`handler`).
    @inline(__always)
    private static func typedInvocationStage(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, _ sig: UnsafePointer<sf_signature>,
                                             handler: sf_method_t, count: Int,
                                             store: (Int, UnsafeMutableRawPointer) -> Void) throws(RuntimeError) -> TypedInvocationOutcome {
        if let declared = try declaredSignature(raw, selector, cls), declared != sig {
            return .declared(handler: handler, Signature(raw: declared))
        }
        // Immortal: no retain and release around the call.
        // The record is used through a guaranteed reference while `invocation` holds it: Swift
        // retained it around every call that could reach it otherwise.
        let invocation = Invocation.take(ObjectWord<SignatureStorage>(sig.pointee.swift))
        let record = ObjectWord(unretained: invocation.storage)
        record.withObject { $0.store(raw, selector, count: count, store) }
        try deliver(invocation, to: raw, cls, handler)
        let bits = record.withObject { $0.returnBits() }
        // No other reference may be held here: a record `forwardInvocation:` let go of is reused.
        var done = consume invocation
        Invocation.recycle(&done)
        return .returned(bits.0, bits.1)
    }
}

extension InvocationStorage {
    /// Writes a typed call's receiver, selector and values into this (empty) record.
    @inline(__always)
    func store(_ raw: sf_id, _ selector: Selector, count: Int, _ store: (Int, UnsafeMutableRawPointer) -> Void) {
        h.pointee.target = raw
        h.pointee.selector = selector.raw
        let base = self.base
        let offsets = h.pointee.offsets
        base.storeBytes(of: raw, toByteOffset: offsets[0], as: sf_id.self)
        base.storeBytes(of: selector.raw, toByteOffset: offsets[1], as: sf_sel.self)
        for i in 0..<min(count, h.pointee.argumentCount - 2) { store(i, base + offsets[i + 2]) }
    }

    /// The return value as a typed caller takes it (at most 16 bytes), moved out of the record.
    func returnBits() -> (UInt64, UInt64) {
        // A scalar is read as words (the storage holds at least 16 bytes; the caller reads only
        // its type's bytes): a copy of a few bytes was a call to memmove.
        let (size, returnsObject) = signature.withObject { ($0.returnValueBytes, $0.returnsObject) }
        if !returnsObject, !h.pointee.ownsReturnString {
            let p = returnPointer
            return (size == 0 ? 0 : p.load(as: UInt64.self), size <= 8 ? 0 : p.load(fromByteOffset: 8, as: UInt64.self))
        }
        var bits: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &bits) { copyReturn(to: $0.baseAddress!) }
        return bits
    }
}

extension Invocation {
    /// An empty record for `signature` to store a call's values into: the signature's spare
    /// (see `recycle`) when there is one.
    static func take(_ signature: SignatureStorage) -> Invocation {
        take(ObjectWord(unretained: signature))
    }

    /// `take` for an immortal signature the caller does not hold: read without a retain.
    static func take(_ signature: ObjectWord<SignatureStorage>) -> Invocation {
        let spare = signature.withObject { $0.spareRecord.exchange(nil) }
        return Invocation(storage: spare?.take() ?? InvocationStorage.make(signature.object))
    }
}
