import CShims
import Glibc

private func protocolArg(_ p: OpaquePointer?, _ what: String = "protocol") -> Result<RuntimeProtocol, RuntimeError> {
    guard let proto = RuntimeProtocol.validated(p.map { UnsafeRawPointer($0) }) else {
        return .failure(.invalidArgument(className: "-", selector: "-", reason: "\(what) is NULL or not a protocol"))
    }
    return .success(proto)
}

/// A malloc'ed copy of `items` for a C caller to free (NULL when empty).
private func cList<T>(_ items: [T], _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<T>? {
    outCount?.pointee = UInt32(items.count)
    guard !items.isEmpty else { return nil }
    let p = malloc(MemoryLayout<T>.stride * items.count)!.bindMemory(to: T.self, capacity: items.count)
    p.initialize(from: items, count: items.count)
    return p
}

@_cdecl("sf_allocateProtocol")
func sf_allocateProtocol_impl(_ name: UnsafePointer<CChar>?) -> OpaquePointer? {
    do {
        let p = try RuntimeProtocol.allocate(name: try nameArg(name, "protocol name").get())
        succeed()
        return p.raw
    } catch { return fail(error, nil) }
}

@_cdecl("sf_registerProtocol")
func sf_registerProtocol_impl(_ p: OpaquePointer?) -> sf_status {
    do {
        try protocolArg(p).get().register()
        succeed()
        return SF_OK
    } catch { return fail(error, error.code) }
}

@_cdecl("sf_getProtocol")
func sf_getProtocol_impl(_ name: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let name else { return nil }
    return RuntimeProtocol.named(String(cString: name))?.raw
}

@_cdecl("sf_protocol_getName")
func sf_protocol_getName_impl(_ p: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let proto = try? protocolArg(p).get() else { return nil }
    return Runtime.state.lock.withLock { ProtocolTable.cName(proto) }
}

@_cdecl("sf_protocol_addMethodDescription")
func sf_protocol_addMethodDescription_impl(_ p: OpaquePointer?, _ sel: sf_sel?, _ types: UnsafePointer<CChar>?,
                                           _ isRequired: Bool, _ isInstance: Bool) -> sf_status {
    do throws(RuntimeError) {
        let proto = try protocolArg(p).get()
        guard let sel, let types else {
            throw RuntimeError.invalidArgument(className: proto.name, selector: "-", reason: "selector or types is NULL")
        }
        try proto.addMethodDescription(Selector(raw: sel), types: String(cString: types), isRequired: isRequired, isInstanceMethod: isInstance)
        succeed()
        return SF_OK
    } catch { return fail(error, error.code) }
}

@_cdecl("sf_protocol_addProtocol")
func sf_protocol_addProtocol_impl(_ p: OpaquePointer?, _ addition: OpaquePointer?) -> sf_status {
    do {
        try protocolArg(p).get().addProtocol(try protocolArg(addition, "the added protocol").get())
        succeed()
        return SF_OK
    } catch { return fail(error, error.code) }
}

@_cdecl("sf_protocol_getMethodDescription")
func sf_protocol_getMethodDescription_impl(_ p: OpaquePointer?, _ sel: sf_sel?, _ isRequired: Bool,
                                           _ isInstance: Bool) -> sf_method_description {
    guard let proto = try? protocolArg(p).get(), let sel else { return sf_method_description(name: nil, types: nil) }
    let key = RuntimeProtocol.Key(selector: Selector(raw: sel), isRequired: isRequired, isInstanceMethod: isInstance)
    return Runtime.state.lock.withLock {
        proto.lookUp(key).map { sf_method_description(name: sel, types: $0.1) } ?? sf_method_description(name: nil, types: nil)
    }
}

@_cdecl("sf_protocol_copyMethodDescriptionList")
func sf_protocol_copyMethodDescriptionList_impl(_ p: OpaquePointer?, _ isRequired: Bool, _ isInstance: Bool,
                                                _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_method_description>? {
    guard let proto = try? protocolArg(p).get() else { return cList([sf_method_description](), outCount) }
    let items = Runtime.state.lock.withLock {
        proto.order.filter { $0.isRequired == isRequired && $0.isInstanceMethod == isInstance }
            .map { sf_method_description(name: $0.selector.raw, types: proto.cTypes[$0]!) }
    }
    return cList(items, outCount)
}

@_cdecl("sf_protocol_copyProtocolList")
func sf_protocol_copyProtocolList_impl(_ p: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<OpaquePointer?>? {
    let items = (try? protocolArg(p).get())?.protocols.map { Optional($0.raw) } ?? []
    return cList(items, outCount)
}

@_cdecl("sf_protocol_conformsToProtocol")
func sf_protocol_conformsToProtocol_impl(_ p: OpaquePointer?, _ other: OpaquePointer?) -> Bool {
    guard let a = try? protocolArg(p).get(), let b = try? protocolArg(other).get() else { return false }
    return a.conforms(to: b)
}

@_cdecl("sf_copyProtocolList")
func sf_copyProtocolList_impl(_ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<OpaquePointer?>? {
    cList(RuntimeProtocol.allProtocols.map { Optional($0.raw) }, outCount)
}

@_cdecl("sf_class_addProtocol")
func sf_class_addProtocol_impl(_ cls: sf_class_t?, _ p: OpaquePointer?) -> Bool {
    do throws(RuntimeError) {
        guard let cls else { throw RuntimeError.invalidArgument(className: "-", selector: "-", reason: "class is NULL") }
        let added = try RuntimeClass.from(cls).addProtocol(try protocolArg(p).get())
        succeed()
        return added
    } catch { return fail(error, false) }
}

@_cdecl("sf_class_conformsToProtocol")
func sf_class_conformsToProtocol_impl(_ cls: sf_class_t?, _ p: OpaquePointer?) -> Bool {
    guard let cls, let proto = try? protocolArg(p).get() else { return false }
    return RuntimeClass.from(cls).conforms(to: proto)
}

@_cdecl("sf_class_copyProtocolList")
func sf_class_copyProtocolList_impl(_ cls: sf_class_t?, _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<OpaquePointer?>? {
    cList(cls.map { RuntimeClass.from($0).protocols.map { Optional($0.raw) } } ?? [], outCount)
}

@_cdecl("sf_object_conformsToProtocol")
func sf_object_conformsToProtocol_impl(_ obj: sf_id?, _ p: OpaquePointer?) -> Bool {
    guard let obj, let proto = try? protocolArg(p).get() else { return false }
    return ObjectRef(obj).conforms(to: proto)
}
