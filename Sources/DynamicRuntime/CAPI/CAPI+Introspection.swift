import CDynamicRuntime
import Glibc

// class_copyMethodList and friends: one malloc'd array per call, freed with sf_free.

/// The C function `sf_class_copyMethodList` of SelectorForwarding.h.
@_cdecl("sf_class_copyMethodList")
@_spi(CAPI) public func sf_class_copyMethodList_impl(_ cls: sf_class_t?, _ count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_method_t?>? {
    count?.pointee = 0
    return capi(nil) { () throws(RuntimeError) in
        let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
        let methods: [sf_method_t?] = Runtime.state.lock.withLock {
            c.methods.values.sorted { $0.selector.name < $1.selector.name }.map { $0.raw }
        }
        return CList.copy(methods, count: count)
    }
}

/// The C function `sf_class_copyIvarList` of SelectorForwarding.h.
@_cdecl("sf_class_copyIvarList")
@_spi(CAPI) public func sf_class_copyIvarList_impl(_ cls: sf_class_t?, _ count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_ivar_description>? {
    count?.pointee = 0
    return capi(nil) { () throws(RuntimeError) in
        let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
        let ivars = Runtime.state.lock.withLock { c.ivarList }
        count?.pointee = UInt32(ivars.count)
        guard !ivars.isEmpty else { return nil }
        guard let list = CList.withStrings(ivars.map { [$0.name, $0.type.encoding] }, { i, s in
            sf_ivar_description(name: s[0], types: s[1], offset: ivars[i].offset, size: ivars[i].size)
        }) else {
            throw .invalidArgument(.init(className: c.name, reason: "out of memory"))
        }
        return list
    }
}

/// The C function `sf_copyClassList` of SelectorForwarding.h.
@_cdecl("sf_copyClassList")
@_spi(CAPI) public func sf_copyClassList_impl(_ count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_class_t?>? {
    succeed()
    return CList.copy(RuntimeClass.allClasses.filter { !$0.isHidden }.map { Optional($0.raw) }, count: count)
}
