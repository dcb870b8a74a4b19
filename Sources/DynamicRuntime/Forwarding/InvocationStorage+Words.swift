import CDynamicRuntime

// A captured call whose arguments are all scalars or objects of 1, 2, 4 or 8 bytes (most
// methods) is copied and emptied word by word from a plan worked out when the record is made,
// instead of through the signature's arrays and `memcpy` (a throttled call captured into a
// spare record, docs/performance.md "Throttled calls").
extension InvocationStorage {
    /// The header's `plan` and `objectMask` for `sig`: (0, 0) when an argument is larger than
    /// 8 bytes, not at its natural alignment, a C string (the record copies those), or when
    /// there are more than 16 arguments.
    static func wordPlan(_ sig: SignatureStorage) -> (plan: UInt64, objects: UInt64) {
        let count = sig.argumentTypes.count
        guard count <= 16, sig.cStringArguments.isEmpty else { return (0, 0) }
        var plan: UInt64 = 0, objects: UInt64 = 0, offset = 0
        for i in 0..<count {
            let size = sig.argumentSizes[i]
            guard size == 1 || size == 2 || size == 4 || size == 8 else { return (0, 0) }
            offset = (offset + size - 1) & ~(size - 1)
            guard sig.argumentOffsets[i] == offset else { return (0, 0) }
            offset += size
            plan |= UInt64(size) << UInt64(4 * i)
            if i >= 2, sig.argumentTypes[i].isRetainedObject { objects |= 1 << UInt64(i) }
        }
        return (plan, objects)
    }

    /// Whether `capture(from:)` can fill this record: it has a plan and was emptied for reuse.
    var capturesByWords: Bool { h.pointee.plan != 0 && h.pointee.emptied }

    /// `fill(from:)` then `retainArguments()` for a record `capturesByWords`: copies the live
    /// frame by its plan and retains the target and object arguments.
    func capture(from arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let header = h
        copyByPlan { UnsafeRawPointer(arguments[$0].unsafelyUnwrapped) }
        header.pointee.emptied = false
        header.pointee.argumentsRetained = true
        header.pointee.selector = base.load(fromByteOffset: 8, as: sf_sel.self)
        let target = Self.retainForCapture(base.load(as: sf_id?.self))
        header.pointee.target = target
        if target == nil { base.storeBytes(of: nil, as: sf_id?.self) }
        forEachObjectArgument { p in p.storeBytes(of: Self.retainForCapture(p.load(as: sf_id?.self)), as: sf_id?.self) }
    }

    /// `HookContext.refill(_:)` for this record, which nobody else holds and whose target is
    /// the hook call's receiver: rewrites it with the call's arguments and re-reads the original when its box is no longer the
    /// published one. One function, without closures: a borrowed record or hook in a closure
    /// was called out of line.
    func rewrite(from state: UnsafeMutablePointer<HookCallState>, of hookRef: ObjectWord<MethodHook>) -> Bool {
        let signature = hookRef.withObject { ObjectWord(unretained: $0.signature.storage) }
        guard h.pointee.signature === signature.object else { return false }
        // A word call's arguments are its words: no argument vector is built for them.
        if let argv = state.pointee.argv {
            guard rewriteWords(from: argv) else { return false }
        } else {
            guard rewriteWords(fromWords: HookCallState.words(state)) else { return false }
        }
        if let kept = h.pointee.implementationBox, hookRef.withObject({ $0.isCurrentOriginal(kept) }) {
            return true
        }
        HookContext.readOriginal(of: hookRef.object, into: self)
        return true
    }

    /// For a record `capture(from:)` filled and nothing has replayed, of the call's receiver
    /// (the caller checked): copies the live frame over it when the call has the record's
    /// selector and no object argument, so that nothing is retained or released. Returns
    /// false, changing nothing, otherwise.
    func rewriteWords(from arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Bool {
        guard isRewritable(selector: UnsafeRawPointer(arguments[1].unsafelyUnwrapped).load(as: UInt.self)) else {
            return false
        }
        // The target and selector words are the record's already.
        copyByPlan(skippingReceiverAndSelector: true) { UnsafeRawPointer(arguments[$0].unsafelyUnwrapped) }
        return true
    }

    /// `rewriteWords(from:)` for a call whose arguments are register words, one per argument
    /// (a hook's word call): false unless every argument is a word.
    @inline(__always)
    func rewriteWords(fromWords words: UnsafePointer<UInt64>) -> Bool {
        let plan = h.pointee.plan
        guard plan & 0x8888_8888_8888_8888 == plan, isRewritable(selector: UInt(words[1])) else { return false }
        copyByPlan(skippingReceiverAndSelector: true) { UnsafeRawPointer(words + $0) }
        return true
    }

    /// Whether a call of `selector` (its bits) to the record's target may be copied over this
    /// record in place.
    @inline(__always)
    private func isRewritable(selector: UInt) -> Bool {
        let header = h
        return header.pointee.plan != 0 && header.pointee.objectMask == 0 && !header.pointee.emptied
            && header.pointee.argumentsRetained && !header.pointee.ownsReturnObject && !header.pointee.ownsReturnString
            && header.pointee.target != nil && selector == UInt(bitPattern: header.pointee.selector)
    }

    /// Copies the live frame's arguments into the record by its plan, each read from
    /// `argument(i)`; with `skippingReceiverAndSelector`, from the third argument on (the
    /// first two are always 8-byte words).
    @inline(__always)
    private func copyByPlan(skippingReceiverAndSelector skip: Bool = false, _ argument: (Int) -> UnsafeRawPointer) {
        let base = self.base
        var plan = h.pointee.plan, offset = 0, i = 0
        if skip {
            plan >>= 8
            offset = 16
            i = 2
        }
        if plan & 0x8888_8888_8888_8888 == plan {
            // Words only (most methods).
            while plan != 0 {
                base.storeBytes(of: argument(i).loadUnaligned(as: UInt64.self), toByteOffset: offset, as: UInt64.self)
                offset += 8
                i += 1
                plan >>= 4
            }
        }
        while plan != 0 {
            let size = Int(plan & 0xF)
            offset = (offset + size - 1) & ~(size - 1)
            let from = argument(i), to = base + offset
            switch size {
            case 8: to.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
            case 4: to.storeBytes(of: from.loadUnaligned(as: UInt32.self), as: UInt32.self)
            case 2: to.storeBytes(of: from.loadUnaligned(as: UInt16.self), as: UInt16.self)
            default: to.storeBytes(of: from.load(as: UInt8.self), as: UInt8.self)
            }
            offset += size
            i += 1
            plan >>= 4
        }
    }

    /// Out of line, so that the one-word case above stays two stores rather than a `memset`.
    @inline(never)
    private func zeroReturn(_ size: Int) {
        returnPointer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    }

    /// For a record with a plan: calls `body` with the place of each object argument.
    @inline(__always)
    func forEachObjectArgument(_ body: (UnsafeMutableRawPointer) -> Void) {
        var objects = h.pointee.objectMask
        guard objects != 0 else { return }
        let base = self.base
        var plan = h.pointee.plan, offset = 0, i = 0
        while objects != 0 {
            let size = Int(plan & 0xF)
            offset = (offset + size - 1) & ~(size - 1)
            if objects & 1 != 0 { body(base + offset) }
            offset += size
            i += 1
            plan >>= 4
            objects >>= 1
        }
    }

    /// `emptyForReuse` for a record with a plan that nothing returned into and that holds no
    /// copied strings: releases the target and object arguments and zeroes them. With
    /// `keepingImplementation`, an IMP read from a hook's published box stays with its box.
    /// Returns false (doing nothing) for any other record.
    func emptyByWords(keepingImplementation: Bool = false) -> Bool {
        let header = h
        guard header.pointee.plan != 0, !header.pointee.ownsReturnObject, !header.pointee.ownsReturnString,
              header.pointee.copiedStrings.isEmpty else { return false }
        if !keepingImplementation || header.pointee.implementationBox == nil { setImplementation(nil) }
        let returnSize = signature.withObject { $0.returnSize }
        if returnSize <= 8 {
            returnPointer.storeBytes(of: 0, as: UInt64.self)
        } else {
            zeroReturn(returnSize)
        }
        if header.pointee.argumentsRetained {
            header.pointee.argumentsRetained = false
            if let t = header.pointee.target { sf_release_inline(t) }
            forEachObjectArgument { p in
                if let o = p.load(as: sf_id?.self) { sf_release_inline(o) }
                p.storeBytes(of: nil, as: sf_id?.self)
            }
        } else {
            forEachObjectArgument { p in p.storeBytes(of: nil, as: sf_id?.self) }
        }
        header.pointee.target = nil
        base.storeBytes(of: nil, as: sf_id?.self)
        header.pointee.emptied = true
        return true
    }
}
