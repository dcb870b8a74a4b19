import CDynamicRuntime
import Glibc

private func protocolArg(_ p: OpaquePointer?, _ what: String = "protocol") -> Result<RuntimeProtocol, RuntimeError> {
    guard let proto = RuntimeProtocol.validated(p.map { UnsafeRawPointer($0) }) else {
        return .failure(.invalidArgument(.init(operation: what, expected: "a protocol", actual: p == nil ? "NULL" : "a pointer that is not one")))
    }
    return .success(proto)
}

/// The C function `sf_allocateProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_allocateProtocol")
@_spi(CAPI) public func sf_allocateProtocol_impl(_ name: UnsafePointer<CChar>?) -> OpaquePointer? {
    do {
        let p = try RuntimeProtocol.allocate(name: try nameArg(name, "protocol name").get())
        succeed()
        return p.raw
    } catch { return fail(error, nil) }
}

/// The C function `sf_registerProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_registerProtocol")
@_spi(CAPI) public func sf_registerProtocol_impl(_ p: OpaquePointer?) -> sf_status {
    do {
        try protocolArg(p).get().register()
        succeed()
        return SF_OK
    } catch { return fail(error, error.code) }
}

/// The C function `sf_getProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_getProtocol")
@_spi(CAPI) public func sf_getProtocol_impl(_ name: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let name else { return nil }
    return RuntimeProtocol.named(String(cString: name))?.raw
}

/// The C function `sf_protocol_getName` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_protocol_getName")
@_spi(CAPI) public func sf_protocol_getName_impl(_ p: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let proto = try? protocolArg(p).get() else { return nil }
    return Runtime.state.lock.withLock { ProtocolTable.cName(proto) }
}

/// The C function `sf_protocol_addMethodDescription` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_protocol_addMethodDescription")
@_spi(CAPI) public func sf_protocol_addMethodDescription_impl(_ p: OpaquePointer?, _ sel: sf_sel?, _ types: UnsafePointer<CChar>?,
                                           _ isRequired: Bool, _ isInstance: Bool) -> sf_status {
    do throws(RuntimeError) {
        let proto = try protocolArg(p).get()
        guard let sel, let types else {
            throw RuntimeError.nullArgument("a selector and types", className: proto.name)
        }
        try proto.addMethodDescription(Selector(raw: sel), types: String(cString: types), isRequired: isRequired, isInstanceMethod: isInstance)
        succeed()
        return SF_OK
    } catch { return fail(error, error.code) }
}

/// The C function `sf_protocol_addProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_protocol_addProtocol")
@_spi(CAPI) public func sf_protocol_addProtocol_impl(_ p: OpaquePointer?, _ addition: OpaquePointer?) -> sf_status {
    do {
        try protocolArg(p).get().addProtocol(try protocolArg(addition, "the added protocol").get())
        succeed()
        return SF_OK
    } catch { return fail(error, error.code) }
}

/// The C function `sf_protocol_getMethodDescription` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_protocol_getMethodDescription")
@_spi(CAPI) public func sf_protocol_getMethodDescription_impl(_ p: OpaquePointer?, _ sel: sf_sel?, _ isRequired: Bool,
                                           _ isInstance: Bool) -> sf_method_description {
    guard let proto = try? protocolArg(p).get(), let sel else { return sf_method_description(name: nil, types: nil) }
    let key = RuntimeProtocol.Key(selector: Selector(raw: sel), isRequired: isRequired, isInstanceMethod: isInstance)
    return Runtime.state.lock.withLock {
        proto.lookUp(key).map { sf_method_description(name: sel, types: $0.1) } ?? sf_method_description(name: nil, types: nil)
    }
}

/// The C function `sf_protocol_copyMethodDescriptionList` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_protocol_copyMethodDescriptionList")
@_spi(CAPI) public func sf_protocol_copyMethodDescriptionList_impl(_ p: OpaquePointer?, _ isRequired: Bool, _ isInstance: Bool,
                                                _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_method_description>? {
    guard let proto = try? protocolArg(p).get() else { return CList.copy([sf_method_description](), count: outCount) }
    let items = Runtime.state.lock.withLock {
        proto.order.filter { $0.isRequired == isRequired && $0.isInstanceMethod == isInstance }
            .map { sf_method_description(name: $0.selector.raw, types: proto.cTypes[$0]!) }
    }
    return CList.copy(items, count: outCount)
}

/// The C function `sf_protocol_copyProtocolList` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_protocol_copyProtocolList")
@_spi(CAPI) public func sf_protocol_copyProtocolList_impl(_ p: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<OpaquePointer?>? {
    let items = (try? protocolArg(p).get())?.protocols.map { Optional($0.raw) } ?? []
    return CList.copy(items, count: outCount)
}

/// The C function `sf_protocol_conformsToProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_protocol_conformsToProtocol")
@_spi(CAPI) public func sf_protocol_conformsToProtocol_impl(_ p: OpaquePointer?, _ other: OpaquePointer?) -> Bool {
    guard let a = try? protocolArg(p).get(), let b = try? protocolArg(other).get() else { return false }
    return a.conforms(to: b)
}

/// The C function `sf_copyProtocolList` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_copyProtocolList")
@_spi(CAPI) public func sf_copyProtocolList_impl(_ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<OpaquePointer?>? {
    CList.copy(RuntimeProtocol.allProtocols.map { Optional($0.raw) }, count: outCount)
}

/// The C function `sf_class_addProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_addProtocol")
@_spi(CAPI) public func sf_class_addProtocol_impl(_ cls: sf_class_t?, _ p: OpaquePointer?) -> Bool {
    do throws(RuntimeError) {
        guard let cls else { throw RuntimeError.nullArgument("a class") }
        let added = try RuntimeClass.from(cls).addProtocol(try protocolArg(p).get())
        succeed()
        return added
    } catch { return fail(error, false) }
}

/// The C function `sf_class_conformsToProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_conformsToProtocol")
@_spi(CAPI) public func sf_class_conformsToProtocol_impl(_ cls: sf_class_t?, _ p: OpaquePointer?) -> Bool {
    guard let cls, let proto = try? protocolArg(p).get() else { return false }
    return RuntimeClass.from(cls).conforms(to: proto)
}

/// The C function `sf_class_copyProtocolList` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_copyProtocolList")
@_spi(CAPI) public func sf_class_copyProtocolList_impl(_ cls: sf_class_t?, _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<OpaquePointer?>? {
    CList.copy(cls.map { RuntimeClass.from($0).protocols.map { Optional($0.raw) } } ?? [], count: outCount)
}

/// The C function `sf_object_conformsToProtocol` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_object_conformsToProtocol")
@_spi(CAPI) public func sf_object_conformsToProtocol_impl(_ obj: sf_id?, _ p: OpaquePointer?) -> Bool {
    guard let obj, let proto = try? protocolArg(p).get() else { return false }
    return ObjectRef(obj).conforms(to: proto)
}
