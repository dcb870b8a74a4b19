import CDynamicRuntime

/// The C function `sf_storeWeak` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_storeWeak")
@_spi(CAPI) public func sf_storeWeak_impl(_ slot: UnsafeMutablePointer<sf_id?>?, _ obj: sf_id?) -> sf_id? {
    guard let slot else { return fail(.nullArgument("a weak slot"), nil) }
    if let obj, sf_object_isTagged(obj) { return fail(.taggedWeak(obj), slot.pointee) }
    succeed()
    return WeakTable.shared.store(slot, obj)
}

/// The C function `sf_copyWeak` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_copyWeak")
@_spi(CAPI) public func sf_copyWeak_impl(_ destination: UnsafeMutablePointer<sf_id?>?, _ source: UnsafeMutablePointer<sf_id?>?) {
    guard let destination, let source else { return fail(.nullArgument("a destination and a source weak slot"), ()) }
    succeed()
    WeakTable.shared.copy(to: destination, from: source)
}

/// The C function `sf_moveWeak` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_moveWeak")
@_spi(CAPI) public func sf_moveWeak_impl(_ destination: UnsafeMutablePointer<sf_id?>?, _ source: UnsafeMutablePointer<sf_id?>?) {
    guard let destination, let source else { return fail(.nullArgument("a destination and a source weak slot"), ()) }
    succeed()
    WeakTable.shared.move(to: destination, from: source)
}

/// The C function `sf_class_addWeakIvar` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_addWeakIvar")
@_spi(CAPI) public func sf_class_addWeakIvar_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?) -> Bool {
    guard let cls, let name else { return fail(.nullArgument("a class and a name"), false) }
    do throws(RuntimeError) {
        try RuntimeClass.from(cls).addWeakIvar(String(cString: name))
        succeed()
        return true
    } catch {
        return fail(error, false)
    }
}

/// The C function `sf_class_getIvarLayout` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_getIvarLayout")
@_spi(CAPI) public func sf_class_getIvarLayout_impl(_ cls: sf_class_t?) -> UnsafePointer<UInt8>? {
    guard let cls else { return fail(.nullArgument("a class"), nil) }
    succeed()
    return RuntimeClass.from(cls).cLayout(weak: false)
}

/// The C function `sf_class_getWeakIvarLayout` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_getWeakIvarLayout")
@_spi(CAPI) public func sf_class_getWeakIvarLayout_impl(_ cls: sf_class_t?) -> UnsafePointer<UInt8>? {
    guard let cls else { return fail(.nullArgument("a class"), nil) }
    succeed()
    return RuntimeClass.from(cls).cLayout(weak: true)
}
