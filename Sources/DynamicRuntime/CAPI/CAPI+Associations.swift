import CDynamicRuntime

/// The C function `sf_setAssociatedObjectWithPolicy` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_setAssociatedObjectWithPolicy")
@_spi(CAPI) public func sf_setAssociatedObjectWithPolicy_impl(_ obj: sf_id?, _ key: UnsafeRawPointer?, _ value: sf_id?,
                                                               _ policy: sf_association_policy) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        guard let obj, let key else {
            throw .nullArgument("an object and a key")
        }
        guard let p = AssociationPolicy(rawValue: UInt(policy.rawValue)) else {
            throw .invalidArgument(.init(className: CAPIValues.className(of: obj), expected: "an association policy (0, 1, 3, 01401 or 01403)", actual: "\(policy.rawValue)"))
        }
        try Associations.set(obj, key, value, p)
    }
}

/// The C function `sf_copyAssociatedObject` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_copyAssociatedObject")
@_spi(CAPI) public func sf_copyAssociatedObject_impl(_ obj: sf_id?, _ key: UnsafeRawPointer?) -> sf_id? {
    guard let obj, let key, let table = ObjectSideTable.of(obj, create: false) else { return nil }
    return table.getRetainedObject(key)
}

/// The C function `sf_removeAssociatedObjects` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_removeAssociatedObjects")
@_spi(CAPI) public func sf_removeAssociatedObjects_impl(_ obj: sf_id?) {
    guard let obj else { return }
    ObjectRef(obj).removeAssociatedValues()
}
