import CDynamicRuntime

/// The C function `sf_allocateClassPair` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_allocateClassPair")
@_spi(CAPI) public func sf_allocateClassPair_impl(_ superclass: sf_class_t?, _ name: UnsafePointer<CChar>?) -> sf_class_t? {
    do {
        let n = try nameArg(name, "class name").get()
        let cls = try RuntimeClass(unregisteredName: n, key: NameKey(cString: name!),
                                   superclass: superclass.map(RuntimeClass.from), hidden: false)
        succeed()
        return cls.raw
    } catch {
        return fail(error, nil)
    }
}

/// The C function `sf_registerClassPair` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_registerClassPair")
@_spi(CAPI) public func sf_registerClassPair_impl(_ cls: sf_class_t?) {
    guard let cls else { return }
    RuntimeClass.from(cls).register()
}

/// The C function `sf_disposeClassPair` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_disposeClassPair")
@_spi(CAPI) public func sf_disposeClassPair_impl(_ cls: sf_class_t?) -> sf_status {
    guard let cls else { return fail(.nullArgument("a class"), SF_ERR_INVALID_ARGUMENT) }
    do {
        try RuntimeClass.from(cls).dispose()
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}

/// The C function `sf_getClass` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_getClass")
@_spi(CAPI) public func sf_getClass_impl(_ name: UnsafePointer<CChar>?) -> sf_class_t? {
    guard let name else { return nil }
    return RuntimeClass.named(key: NameKey(cString: name))?.raw
}

/// The C function `sf_lookUpClass` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_lookUpClass")
@_spi(CAPI) public func sf_lookUpClass_impl(_ name: UnsafePointer<CChar>?) -> sf_class_t? {
    guard let name else { return nil }
    return RuntimeClass.named(key: NameKey(cString: name))?.raw
}

/// The C function `sf_class_registerAlias_np` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_registerAlias_np")
@_spi(CAPI) public func sf_class_registerAlias_np_impl(_ cls: sf_class_t?, _ alias: UnsafePointer<CChar>?) -> Bool {
    capi(false) { () throws(RuntimeError) in
        let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
        guard let alias else { throw .nullArgument("an alias", className: c.name) }
        try c.registerAlias(key: NameKey(cString: alias))
        return true
    }
}

/// The C function `sf_getMetaClass` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_getMetaClass")
@_spi(CAPI) public func sf_getMetaClass_impl(_ name: UnsafePointer<CChar>?) -> sf_class_t? {
    guard let name else { return nil }
    return RuntimeClass.named(key: NameKey(cString: name))?.metaclass.raw
}

/// The C function `sf_class_respondsToSelector` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_respondsToSelector")
@_spi(CAPI) public func sf_class_respondsToSelector_impl(_ cls: sf_class_t?, _ sel: sf_sel?) -> Bool {
    guard let cls, let sel else { return false }
    return RuntimeClass.from(cls).responds(to: Selector(raw: sel))
}

/// The C function `sf_duplicateClass` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_duplicateClass")
@_spi(CAPI) public func sf_duplicateClass_impl(_ original: sf_class_t?, _ name: UnsafePointer<CChar>?, _ extraBytes: Int) -> sf_class_t? {
    guard let original else { return fail(.nullArgument("a class to duplicate"), nil) }
    do throws(RuntimeError) {
        let n = try nameArg(name, "class name").get()
        let cls = RuntimeClass.from(original)
        guard extraBytes == 0 else {
            throw .invalidArgument(.init(className: cls.name, operation: "duplicate", expected: "0 extra bytes (class objects have no extra storage)", actual: "\(UInt(bitPattern: extraBytes))"))
        }
        let copy = try cls.duplicate(named: n, key: NameKey(cString: name!))
        succeed()
        return copy.raw
    } catch {
        return fail(error, nil)
    }
}
