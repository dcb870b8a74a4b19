import CDynamicRuntime

// class_addMethodsBulk / class_replaceMethodsBulk: the arrays are read and every entry parsed
// before the runtime lock is taken once for all of them.

private func bulkEntries(_ cls: sf_class_t?, _ names: UnsafePointer<sf_sel?>?, _ imps: UnsafePointer<sf_imp?>?,
                         _ types: UnsafePointer<UnsafePointer<CChar>?>?, _ count: UInt32) throws(RuntimeError) -> (RuntimeClass, [RuntimeClass.MethodInstall]) {
    let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
    guard count > 0 else { return (c, []) }
    guard let names, let imps, let types else {
        throw .nullArgument("arrays of \(count) names, IMPs and types", className: c.name)
    }
    var entries: [RuntimeClass.MethodInstall] = []
    entries.reserveCapacity(Int(count))
    for i in 0..<Int(count) {
        guard let sel = names[i] else { throw .nullArgument("a selector at index \(i)", className: c.name) }
        let s = Selector(raw: sel)
        guard let imp = imps[i] else { throw .nullArgument("an IMP at index \(i)", className: c.name, selector: s.name) }
        guard let t = types[i] else { throw .nullArgument("a type encoding at index \(i)", className: c.name, selector: s.name) }
        entries.append(.init(selector: s, imp: IMP(imp), signature: try Signature(String(cString: t))))
    }
    return (c, entries)
}

/// The C function `sf_class_addMethodsBulk` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_addMethodsBulk")
@_spi(CAPI) public func sf_class_addMethodsBulk_impl(_ cls: sf_class_t?, _ names: UnsafePointer<sf_sel?>?, _ imps: UnsafePointer<sf_imp?>?,
                                                      _ types: UnsafePointer<UnsafePointer<CChar>?>?, _ count: UInt32,
                                                      _ failedNames: UnsafeMutablePointer<sf_sel?>?, _ outFailedCount: UnsafeMutablePointer<UInt32>?) -> sf_status {
    outFailedCount?.pointee = 0
    return capiStatus { () throws(RuntimeError) in
        let (c, entries) = try bulkEntries(cls, names, imps, types, count)
        let skipped = try c.installBulk(entries, replacing: false)
        outFailedCount?.pointee = UInt32(skipped.count)
        if let failedNames {
            for (i, s) in skipped.enumerated() { failedNames[i] = s.raw }
        }
        guard skipped.isEmpty else {
            let shown = skipped.prefix(3).map(\.name).joined(separator: ", ") + (skipped.count > 3 ? ", …" : "")
            throw .methodExists(.init(className: c.name, selector: skipped[0].name,
                                      reason: "\(skipped.count) of \(count) methods of the list exist already (\(shown)) and were left as they are; the others were added"))
        }
    }
}

/// The C function `sf_class_replaceMethodsBulk` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_replaceMethodsBulk")
@_spi(CAPI) public func sf_class_replaceMethodsBulk_impl(_ cls: sf_class_t?, _ names: UnsafePointer<sf_sel?>?, _ imps: UnsafePointer<sf_imp?>?,
                                                          _ types: UnsafePointer<UnsafePointer<CChar>?>?, _ count: UInt32) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let (c, entries) = try bulkEntries(cls, names, imps, types, count)
        _ = try c.installBulk(entries, replacing: true)
    }
}
