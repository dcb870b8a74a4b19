import CDynamicRuntime
import Glibc

// objc4's Ivar: a handle per ivar, owned by the class that declares it, so that a C caller
// can hold it (and its strings) without a reference count for as long as that class exists.

/// The handles given out for one class's own ivars. Each is one allocation: an
/// `sf_ivar_description` followed by its two strings. Freed with the class.
final class CIvarHandles {
    private var byName: [String: UnsafeMutablePointer<sf_ivar_description>] = [:]

    /// nil only when out of memory.
    func handle(for ivar: Ivar) -> UnsafeMutablePointer<sf_ivar_description>? {
        if let p = byName[ivar.name] { return p }
        let p = CList.withStrings([[ivar.name, ivar.type.encoding]]) { _, s in
            sf_ivar_description(name: s[0], types: s[1], offset: ivar.offset, size: ivar.size)
        }
        byName[ivar.name] = p
        return p
    }

    deinit {
        for p in byName.values { free(p) }
    }
}

extension RuntimeClass {
    /// The handle of the ivar `name` of this class or a superclass, interned on the class that
    /// declares it; nil when the chain has none.
    func cIvarHandle(named name: String) -> sf_ivar_t? {
        Runtime.state.lock.withLock {
            var c: RuntimeClass? = self
            while let k = c {
                if let ivar = k.ivarList.first(where: { $0.name == name }) {
                    let handles = k.cIvarHandles ?? CIvarHandles()
                    k.cIvarHandles = handles
                    return handles.handle(for: ivar).map(OpaquePointer.init)
                }
                c = k.superclass
            }
            return nil
        }
    }
}

private func description(_ ivar: sf_ivar_t?) throws(RuntimeError) -> sf_ivar_description {
    guard let ivar else { throw .nullArgument("an ivar") }
    return UnsafePointer<sf_ivar_description>(ivar).pointee
}

/// The C function `sf_class_getInstanceVariable` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_getInstanceVariable")
@_spi(CAPI) public func sf_class_getInstanceVariable_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?) -> sf_ivar_t? {
    capi(nil) { () throws(RuntimeError) in
        let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
        guard let name else { throw .nullArgument("an ivar name", className: c.name) }
        let n = String(cString: name)
        guard let handle = c.cIvarHandle(named: n) else {
            throw .invalidArgument(.init(className: c.visibleName, ivar: n, operation: "find an instance variable",
                                         expected: c.isMetaclass ? "a class (a metaclass has no ivars)" : "an ivar of the class or a superclass",
                                         actual: "no ivar of that name"))
        }
        return handle
    }
}

/// The C function `sf_ivar_getName` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_ivar_getName")
@_spi(CAPI) public func sf_ivar_getName_impl(_ ivar: sf_ivar_t?) -> UnsafePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in try description(ivar).name }
}

/// The C function `sf_ivar_getTypeEncoding` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_ivar_getTypeEncoding")
@_spi(CAPI) public func sf_ivar_getTypeEncoding_impl(_ ivar: sf_ivar_t?) -> UnsafePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in try description(ivar).types }
}

/// The C function `sf_ivar_getOffset` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_ivar_getOffset")
@_spi(CAPI) public func sf_ivar_getOffset_impl(_ ivar: sf_ivar_t?) -> Int {
    capi(-1) { () throws(RuntimeError) in try description(ivar).offset }
}
