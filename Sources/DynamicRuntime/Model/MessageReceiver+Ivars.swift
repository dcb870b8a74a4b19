import CDynamicRuntime

/// Typed access to instance variables. Object ivars are strong: setting retains the new value
/// and releases the old one. Weak ones go through the weak table: setting re-points the
/// slot, reading retains a live object (or gives nil) for the value's construction.
extension MessageReceiver {
    private func slot(_ ivar: Ivar, _ type: TypeEncoding) throws(RuntimeError) -> UnsafeMutableRawPointer {
        guard let raw = receiver.raw else {
            throw .invalidArgument(.init(ivar: ivar.name, expected: "an object", actual: "nil"))
        }
        if sf_object_isTagged(raw) { throw .taggedObject(raw, "access an ivar", ivar: ivar.name) }
        let cls = RuntimeClass.from(sf_object_getClass(raw)!)
        guard let declared = cls.ivar(named: ivar.name), declared.offset == ivar.offset else {
            throw .invalidArgument(.init(className: cls.visibleName, ivar: ivar.name, expected: "an ivar of the class chain", actual: "an ivar of another class"))
        }
        guard ivar.type.isCompatible(with: type) else {
            throw .signatureMismatch(.init(className: cls.visibleName, ivar: ivar.name, operation: "the accessor", expected: ivar.type.encoding, actual: type.encoding))
        }
        return UnsafeMutableRawPointer(raw) + ivar.offset
    }

    /// Reads an ivar, checking its type.
    public func value<T: MessageArgument>(of ivar: Ivar, as _: T.Type = T.self) throws(RuntimeError) -> T {
        let p = try slot(ivar, T.typeEncoding)
        func refuseNil() -> RuntimeError {
            .invalidArgument(.init(className: runtimeClass?.visibleName, ivar: ivar.name, expected: "an object (read an ivar that may be nil as an optional)", actual: "nil"))
        }
        guard ivar.isWeak else {
            if !T.acceptsNull, ivar.type.isRetainedObject, p.load(as: UInt.self) == 0 { throw refuseNil() }
            return T(argumentStorage: p)
        }
        var loaded = WeakTable.shared.loadRetained(p.assumingMemoryBound(to: sf_id?.self))
        defer { if let loaded { sf_release_inline(loaded) } }
        if loaded == nil, !T.acceptsNull { throw refuseNil() }
        return withUnsafeBytes(of: &loaded) { T(argumentStorage: $0.baseAddress!) }
    }

    /// Writes an ivar, checking its type.
    ///
    /// - Throws: `invalidArgument` for a type other than the ivar's, and for a small (tagged)
    ///   object stored in a weak ivar.
    public func setValue<T: MessageArgument>(_ value: T, for ivar: Ivar) throws(RuntimeError) {
        let p = try slot(ivar, T.typeEncoding)
        if ivar.isWeak {
            var new: sf_id? = nil
            withUnsafeMutableBytes(of: &new) { value.storeArgument(to: $0.baseAddress!) }
            if let new, sf_object_isTagged(new) { throw .taggedWeak(new, "store it in a weak ivar", ivar: ivar.name) }
            WeakTable.shared.store(p.assumingMemoryBound(to: sf_id?.self), new)
        } else if ivar.type.isRetainedObject {
            let old = p.load(as: sf_id?.self)
            value.storeArgument(to: p)
            if let new = p.load(as: sf_id?.self) { sf_retain_inline(new) }
            if let old { sf_release_inline(old) }
        } else {
            value.storeArgument(to: p)
        }
    }

    /// Reads an ivar by name.
    public func value<T: MessageArgument>(ofIvar name: String, as type: T.Type = T.self) throws(RuntimeError) -> T {
        try value(of: ivar(name), as: type)
    }

    /// Writes an ivar by name.
    public func setValue<T: MessageArgument>(_ value: T, forIvar name: String) throws(RuntimeError) {
        try setValue(value, for: ivar(name))
    }

    private func ivar(_ name: String) throws(RuntimeError) -> Ivar {
        guard let raw = receiver.raw, let c = sf_object_getClass(raw) else {
            throw .invalidArgument(.init(ivar: name, expected: "an object", actual: "nil"))
        }
        if sf_object_isTagged(raw) { throw .taggedObject(raw, "access an ivar", ivar: name) }
        let cls = RuntimeClass.from(c)
        guard let v = cls.ivar(named: name) else {
            throw .invalidArgument(.init(className: cls.visibleName, ivar: name, expected: "an ivar of the class chain", actual: "no ivar of that name"))
        }
        return v
    }
}
