import CDynamicRuntime
import Glibc

/// A method a protocol declares: its selector and type encoding.
public struct MethodDescription: Hashable, Sendable {
    /// The declared selector.
    public let selector: Selector
    /// The declared type encoding, e.g. `q@:q`.
    public let types: String
}

/// A protocol made at run time (like `objc_allocateProtocol`): a named set of required and
/// optional instance and class method descriptions, and the protocols it incorporates.
/// Allocated, filled, then registered; registered protocols are immutable and live for the
/// whole process, as selectors do.
///
/// ```swift
/// let p = try RuntimeProtocol.allocate(name: "Drawing")
/// try p.addMethodDescription("draw", types: "v@:", isRequired: true, isInstanceMethod: true)
/// try p.register()
/// try shape.addProtocol(p)
/// shape.conforms(to: p)  // true, for subclasses too
/// ```
public final class RuntimeProtocol: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The protocol's name, unique among protocols.
    public let name: String
    /// The C handle (`sf_protocol_t`), valid for the life of the process.
    public var raw: OpaquePointer { OpaquePointer(ObjectWord(unretained: self).pointer) }

    struct Key: Hashable {
        let selector: Selector
        let isRequired: Bool
        let isInstanceMethod: Bool
    }

    // Guarded by Runtime.state.lock.
    var isRegistered = false
    var descriptions: [Key: MethodDescription] = [:]
    var order: [Key] = []
    var incorporated: [RuntimeProtocol] = []
    /// NUL-terminated copies of the encodings handed to C (immortal, as the protocol is).
    var cTypes: [Key: UnsafePointer<CChar>] = [:]

    private init(name: String) {
        self.name = name
    }

    /// Reserves `name` and creates an empty protocol; call `register()` when it is complete.
    ///
    /// - Throws: `duplicateProtocol` if a protocol with that name exists or is being built,
    ///   `invalidArgument` for an empty name or one containing NUL.
    public static func allocate(name: String) throws(RuntimeError) -> RuntimeProtocol {
        Runtime.ensureInitialized()
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw .invalidArgument(.init(expected: "a protocol name, non-empty and without NUL", actual: "\"\(name)\""))
        }
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> RuntimeProtocol in
            guard ProtocolTable.byName[name] == nil else { throw .duplicateProtocol(.init(className: name)) }
            let p = RuntimeProtocol(name: name)
            ProtocolTable.byName[name] = p
            ProtocolTable.handles.insert(UnsafeRawPointer(p.raw))
            return p
        }
    }

    /// The registered protocol with that name, if any.
    public static func named(_ name: String) -> RuntimeProtocol? {
        Runtime.state.lock.withLock { ProtocolTable.byName[name].flatMap { $0.isRegistered ? $0 : nil } }
    }

    /// Every registered protocol, sorted by name.
    public static var allProtocols: [RuntimeProtocol] {
        Runtime.state.lock.withLock { ProtocolTable.byName.values.filter(\.isRegistered).sorted { $0.name < $1.name } }
    }

    /// The protocol behind a C handle, or nil when `raw` is not one (it is never dereferenced
    /// unless it is).
    public static func validated(_ raw: UnsafeRawPointer?) -> RuntimeProtocol? {
        guard let raw else { return nil }
        return Runtime.state.lock.withLock {
            ProtocolTable.handles.contains(raw) ? ObjectWord<RuntimeProtocol>(raw).object : nil
        }
    }

    /// Makes the protocol usable for adoption; it cannot change afterwards.
    ///
    /// - Throws: `duplicateProtocol` when it is already registered.
    public func register() throws(RuntimeError) {
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard !isRegistered else { throw .duplicateProtocol(.init(className: name)) }
            isRegistered = true
        }
    }

    /// Declares a method. Only before `register()`.
    ///
    /// - Throws: `classAlreadyRegistered` after registration, `reservedSelector` for a
    ///   selector the runtime reserves (`.cxx_destruct`), `malformedEncoding` for bad types,
    ///   `methodExists` when the same kind of description is already declared.
    public func addMethodDescription(_ selector: Selector, types: String, isRequired: Bool,
                                     isInstanceMethod: Bool) throws(RuntimeError) {
        if RuntimeClass.reservedSelectors.contains(selector.name) {
            throw .reservedSelector(.init(className: name, selector: selector.name, reason: "the runtime releases ivars itself; a protocol cannot declare it"))
        }
        let sig = try Signature(types)
        let key = Key(selector: selector, isRequired: isRequired, isInstanceMethod: isInstanceMethod)
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard !isRegistered else { throw .classAlreadyRegistered(.init(className: name, operation: "add a method description to a protocol")) }
            guard descriptions[key] == nil else { throw .methodExists(.init(className: name, selector: selector.name)) }
            descriptions[key] = MethodDescription(selector: selector, types: sig.encoding)
            cTypes[key] = UnsafePointer(strdup(sig.encoding)!)
            order.append(key)
        }
    }

    /// Incorporates `other` (like `@protocol A <B>`). Only before `register()`; `other` must be
    /// registered, and may not incorporate this protocol.
    public func addProtocol(_ other: RuntimeProtocol) throws(RuntimeError) {
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard !isRegistered else { throw .classAlreadyRegistered(.init(className: name, operation: "add a protocol to a protocol")) }
            guard other !== self else {
                throw .invalidArgument(.init(className: name, expected: "another protocol to incorporate", actual: "the protocol itself"))
            }
            guard other.isRegistered else { throw .classNotRegistered(.init(className: other.name, operation: "incorporate it")) }
            if !incorporated.contains(where: { $0 === other }) { incorporated.append(other) }
        }
    }

    /// The protocols this one incorporates directly.
    public var protocols: [RuntimeProtocol] { Runtime.state.lock.withLock { incorporated } }

    /// Whether this protocol is `other` or incorporates it, directly or not.
    public func conforms(to other: RuntimeProtocol) -> Bool {
        Runtime.state.lock.withLock { conformsLocked(to: other) }
    }

    func conformsLocked(to other: RuntimeProtocol) -> Bool {
        self === other || incorporated.contains { $0.conformsLocked(to: other) }
    }

    /// The description of `selector` of that kind, from this protocol or one it incorporates.
    public func methodDescription(for selector: Selector, isRequired: Bool, isInstanceMethod: Bool) -> MethodDescription? {
        Runtime.state.lock.withLock { lookUp(Key(selector: selector, isRequired: isRequired, isInstanceMethod: isInstanceMethod))?.0 }
    }

    func lookUp(_ key: Key) -> (MethodDescription, UnsafePointer<CChar>)? {
        if let d = descriptions[key] { return (d, cTypes[key]!) }
        for p in incorporated { if let found = p.lookUp(key) { return found } }
        return nil
    }

    /// This protocol's own descriptions of that kind, in declaration order.
    public func methodDescriptions(isRequired: Bool, isInstanceMethod: Bool) -> [MethodDescription] {
        Runtime.state.lock.withLock {
            order.filter { $0.isRequired == isRequired && $0.isInstanceMethod == isInstanceMethod }.map { descriptions[$0]! }
        }
    }

    /// Whether both are the same protocol (protocols are unique by name).
    public static func == (a: RuntimeProtocol, b: RuntimeProtocol) -> Bool { a === b }
    /// Hashes the protocol's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// `<protocol Name>`, for logs.
    public var description: String { "<protocol \(name)>" }
}

/// Every allocated protocol by name (lock held). Protocols are never freed: the table keeps
/// them, and C holds unretained handles.
enum ProtocolTable {
    nonisolated(unsafe) static var byName: [String: RuntimeProtocol] = [:]
    nonisolated(unsafe) static var handles: Set<UnsafeRawPointer> = []
    nonisolated(unsafe) static var cNames: [ObjectIdentifier: UnsafePointer<CChar>] = [:]

    /// The protocol's name as an immortal C string, made on first use (lock held).
    static func cName(_ p: RuntimeProtocol) -> UnsafePointer<CChar> {
        if let n = cNames[ObjectIdentifier(p)] { return n }
        let n = UnsafePointer(strdup(p.name)!)
        cNames[ObjectIdentifier(p)] = n
        return n
    }
}
