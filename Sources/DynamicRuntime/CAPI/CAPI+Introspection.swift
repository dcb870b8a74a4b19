import CDynamicRuntime
import Glibc

// class_copyMethodList and friends: one malloc'd array per call, freed with sf_free.

private func copyList<T>(_ items: [T], _ count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<T>? {
    count?.pointee = UInt32(items.count)
    guard !items.isEmpty, let p = malloc(MemoryLayout<T>.stride * items.count) else { return nil }
    let list = p.bindMemory(to: T.self, capacity: items.count)
    list.initialize(from: items, count: items.count)
    return list
}

/// The C function `sf_class_copyMethodList` of SelectorForwarding.h.
@_cdecl("sf_class_copyMethodList")
@_spi(CAPI) public func sf_class_copyMethodList_impl(_ cls: sf_class_t?, _ count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_method_t?>? {
    count?.pointee = 0
    return capi(nil) { () throws(RuntimeError) in
        let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
        let methods: [sf_method_t?] = Runtime.state.lock.withLock {
            c.methods.values.sorted { $0.selector.name < $1.selector.name }.map { $0.raw }
        }
        return copyList(methods, count)
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
        // One allocation: the descriptions, then their strings.
        let head = MemoryLayout<sf_ivar_description>.stride * ivars.count
        let strings = ivars.map { Array($0.name.utf8CString) + Array($0.type.encoding.utf8CString) }
        guard let p = malloc(head + strings.reduce(0) { $0 + $1.count }) else {
            throw .invalidArgument(.init(className: c.name, reason: "out of memory"))
        }
        let list = p.bindMemory(to: sf_ivar_description.self, capacity: ivars.count)
        var text = (p + head).assumingMemoryBound(to: CChar.self)
        for (i, ivar) in ivars.enumerated() {
            let name = text
            for ch in ivar.name.utf8CString { text.pointee = ch; text += 1 }
            let types = text
            for ch in ivar.type.encoding.utf8CString { text.pointee = ch; text += 1 }
            (list + i).initialize(to: sf_ivar_description(name: name, types: types, offset: ivar.offset, size: ivar.size))
        }
        return list
    }
}

/// The C function `sf_copyClassList` of SelectorForwarding.h.
@_cdecl("sf_copyClassList")
@_spi(CAPI) public func sf_copyClassList_impl(_ count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_class_t?>? {
    succeed()
    return copyList(RuntimeClass.allClasses.filter { !$0.isHidden }.map { Optional($0.raw) }, count)
}
