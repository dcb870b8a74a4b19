import CDynamicRuntime

/// objc4's class_addMethodsBulk / class_replaceMethodsBulk: many methods under one acquisition
/// of the runtime lock and at most one cache flush, for a class built from a table.
extension RuntimeClass {
    /// One method of a bulk add or replace.
    struct MethodInstall {
        let selector: Selector
        let imp: IMP
        let signature: Signature
    }

    /// Installs `entries` in order. Every entry is checked before anything changes, so a
    /// refused one (a reserved selector, a closure IMP of other types, a replacement with
    /// other types) leaves the class as it was. Adding, a selector the class already has (its
    /// own method, or an earlier entry's) is left alone and returned; replacing, every entry
    /// is installed and the later of two with the same selector wins.
    func installBulk(_ entries: [MethodInstall], replacing: Bool) throws(RuntimeError) -> [Selector] {
        for e in entries { try checkReserved(e.selector, e.signature) }
        let skipped = try Runtime.state.lock.withLock { () throws(RuntimeError) -> [Selector] in
            var imps: [IMP] = []
            imps.reserveCapacity(entries.count)
            var planned: [Selector: Signature] = [:]
            var skipped: [Selector] = []
            var keep: [Bool] = []
            keep.reserveCapacity(entries.count)
            for e in entries {
                imps.append(try UnboundIMPs.resolveNolock(e.imp, for: e.signature, className: name, selector: e.selector))
                guard let current = planned[e.selector] ?? methods[e.selector]?.signature else {
                    planned[e.selector] = e.signature
                    keep.append(true)
                    continue
                }
                if !replacing {
                    skipped.append(e.selector)
                    keep.append(false)
                    continue
                }
                guard Self.replacement(e.signature, fits: current) else {
                    throw .signatureMismatch(.init(className: name, selector: e.selector.name, expected: current.encoding, actual: e.signature.encoding))
                }
                keep.append(true)
            }
            var added = false
            for (i, e) in entries.enumerated() where keep[i] {
                if let existing = methods[e.selector] {
                    // As install does: a hook keeps its trampoline and wraps the new IMP; the old
                    // IMP's owner is retired after the grace period.
                    if let hook = existing.hook { _ = hook.replaceOriginal(with: imps[i]) } else { _ = existing.exchange(with: imps[i]) }
                } else {
                    methods[e.selector] = MethodRecord(selector: e.selector, signature: e.signature, imp: imps[i], in: self)
                    added = true
                }
            }
            if added { flushCaches() }
            return skipped
        }
        if isMetaclass, entries.contains(where: { $0.selector == Forwarding.resolveInstanceMethod || $0.selector == Forwarding.resolveClassMethod }) {
            Runtime.state.lock.withLock { resolverChanged() }
        }
        Runtime.state.collectGarbage()
        return skipped
    }
}
