import CShims
import Glibc

/// A reference to a runtime object that does not own it, like Objective-C's `id` without ARC:
/// the receiver handed to method closures, and the way to pass objects as arguments.
/// It may be nil; sending a message to nil does nothing and returns zero, as in Objective-C.
public struct ObjectRef: Hashable, @unchecked Sendable, CustomStringConvertible, MessageArgument, WordRepresentable {
    /// The C object, or nil.
    public let raw: sf_id?

    /// Wraps a C object without retaining it.
    public init(_ raw: sf_id?) { self.raw = raw }

    /// The nil object.
    public static let `nil` = ObjectRef(nil)

    /// Whether this is the nil object.
    public var isNil: Bool { raw == nil }

    /// An owning handle (retains); nil for the nil object.
    public func retained() -> Object? { raw.map { Object(retaining: $0) } }

    public static var typeEncoding: TypeEncoding { .object }
    public init(argumentStorage: UnsafeRawPointer) { raw = argumentStorage.load(as: sf_id?.self) }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_id?.self) }
    public var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    public init(word: UInt64) { raw = sf_id(bitPattern: UInt(word)) }

    public var description: String {
        guard let raw else { return "nil" }
        let cls = sf_object_getClass(raw).map { String(cString: sf_class_getName($0)) } ?? "?"
        return "<\(cls): \(UnsafeRawPointer(raw))>"
    }
}

/// An owning handle to a runtime object: retains on creation, releases when it goes away.
public final class Object: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The C object (+1 owned by this handle).
    public let raw: sf_id

    /// Takes over a +1 reference (e.g. from `sf_class_createInstance`).
    public init(adopting raw: sf_id) { self.raw = raw }

    /// Retains `raw` for the lifetime of this handle.
    public init(retaining raw: sf_id) {
        sf_retain_inline(raw)
        self.raw = raw
    }

    deinit { sf_release_inline(raw) }

    /// The non-owning reference.
    public var ref: ObjectRef { ObjectRef(raw) }

    public static func == (a: Object, b: Object) -> Bool { a.raw == b.raw }
    public func hash(into hasher: inout Hasher) { hasher.combine(UnsafeRawPointer(raw)) }
    public var description: String { ref.description }
}

extension Object: MessageArgument {
    public static var typeEncoding: TypeEncoding { .object }
    public static var acceptsNull: Bool { false }
    public convenience init(argumentStorage: UnsafeRawPointer) {
        self.init(retaining: argumentStorage.load(as: sf_id.self))
    }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_id.self) }
}

extension Optional: MessageArgument where Wrapped == Object {
    public static var typeEncoding: TypeEncoding { .object }
    public init(argumentStorage: UnsafeRawPointer) {
        self = argumentStorage.load(as: sf_id?.self).map { Object(retaining: $0) }
    }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self?.raw, as: sf_id?.self) }
}

extension Optional: MessageReturn where Wrapped == Object {
    public static var returnEncoding: TypeEncoding { .object }
    /// Takes ownership of the +1 reference the method returned.
    public init(returnStorage: UnsafeRawPointer) {
        self = returnStorage.load(as: sf_id?.self).map { Object(adopting: $0) }
    }
    public func storeReturn(to storage: UnsafeMutableRawPointer) {
        if let raw = self?.raw { sf_retain_inline(raw) }
        storage.storeBytes(of: self?.raw, as: sf_id?.self)
    }
}

extension Optional: WordRepresentable where Wrapped == Object {
    public var word: UInt64 { UInt64(UInt(bitPattern: self?.raw)) }
    /// Adopts a +1 reference returned in a register.
    public init(word: UInt64) { self = sf_id(bitPattern: UInt(word)).map { Object(adopting: $0) } }
}

/// A class passed as a value (`#`); nil is allowed.
public struct ClassRef: PointerMessageValue, Hashable, @unchecked Sendable {
    /// The C class, or nil.
    public let raw: sf_class_t?
    /// Wraps a class.
    public init(_ cls: RuntimeClass?) { raw = cls?.raw }
    /// Wraps a C class.
    public init(raw: sf_class_t?) { self.raw = raw }
    /// The Swift class, or nil.
    public var runtimeClass: RuntimeClass? { raw.map(RuntimeClass.from) }
    public static var typeEncoding: TypeEncoding { .classObject }
    public init(argumentStorage: UnsafeRawPointer) { raw = argumentStorage.load(as: sf_class_t?.self) }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_class_t?.self) }
    public var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    public init(word: UInt64) { raw = sf_class_t(bitPattern: UInt(word)) }
}

/// Anything that can receive messages: objects, object references and classes.
public protocol MessageReceiver {
    /// The receiving object (for a class: the class object).
    var receiver: ObjectRef { get }
    /// Where lookup starts; nil means the receiver's class. Super sends override it.
    var lookupStart: sf_class_t? { get }
    /// Whether this is a super send, whose nil `lookupStart` means "no superclass" (the send
    /// then fails with `doesNotRecognizeSelector`) rather than "the receiver's class".
    var isSuperSend: Bool { get }
}

extension ObjectRef: MessageReceiver { public var receiver: ObjectRef { self } }
extension Object: MessageReceiver { public var receiver: ObjectRef { ObjectRef(raw) } }
extension RuntimeClass: MessageReceiver { public var receiver: ObjectRef { ObjectRef(sf_class_as_object(raw)) } }

extension MessageReceiver {
    /// The object's class (for a class object: its metaclass), hiding hook subclasses.
    public var runtimeClass: RuntimeClass? {
        guard let raw = receiver.raw, let cls = sf_object_getClass(raw) else { return nil }
        return RuntimeClass.from(cls)
    }

    /// Whether the object's class (or the class, for class objects) is `cls` or inherits from it.
    public func isKind(of cls: RuntimeClass) -> Bool { runtimeClass?.isSubclass(of: cls) ?? false }

    /// Whether a send of `selector` would find a method.
    public func responds(to selector: Selector) -> Bool {
        guard let raw = receiver.raw else { return false }
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        return sf_lookup_method(sf_object_isa(raw), selector.raw) != nil
    }

    /// The current strong reference count (immortal objects such as classes report Int.max).
    public var retainCount: Int {
        guard let raw = receiver.raw else { return 0 }
        let n = sf_object_retainCount(raw)
        return n == UInt.max ? Int.max : Int(n)
    }
}

/// Allocation and deallocation of instances.
enum ObjectLifecycle {
    static func allocate(_ cls: RuntimeClass) -> sf_id {
        let size = cls.instanceSize
        let memory = calloc(1, size)!
        let obj = memory.assumingMemoryBound(to: sf_object.self)
        sf_object_init_header(obj, cls.raw, 0)
        sf_class_adjust_live_instances(cls.raw, 1)
        sf_counter_objects_add(1)
        return obj
    }

    /// Runs once, when the last strong reference goes: weak refs read nil from here on, then
    /// dealloc observers run (the object is still intact), then ivars and associations go.
    static func deallocate(_ obj: sf_id) {
        sf_object_set_flags(obj, UInt32(SF_OBJ_DEALLOCATING))
        if sf_object_flags(obj) & UInt32(SF_OBJ_HAS_WEAK) != 0 {
            WeakTable.shared.clear(obj)
        }
        if let side = sf_object_side(obj) {
            let table = Unmanaged<ObjectSideTable>.fromOpaque(side).takeRetainedValue()
            table.runDeallocObservers(ObjectRef(obj))
            table.releaseAssociations()
        }
        // The isa as observers left it (no hidden class can be made from here on). Resolve the
        // visible class first: tearing down a hidden class may free it.
        let isa = sf_object_isa(obj)!
        let cls = RuntimeClass.from(sf_object_getClass(obj)!)
        if sf_class_info(isa) & UInt32(SF_CLASS_HIDDEN) != 0 {
            sf_object_set_isa(obj, cls.raw)
            HiddenClassRegistry.objectDeallocated(obj, hiddenClass: RuntimeClass.from(isa))
        }
        for offset in cls.objectIvarOffsets {
            let slot = (UnsafeMutableRawPointer(obj) + offset).assumingMemoryBound(to: sf_id?.self)
            if let value = slot.pointee {
                slot.pointee = nil
                sf_release_inline(value)
            }
        }
        sf_class_adjust_live_instances(cls.raw, -1)
        sf_counter_objects_add(-1)
        free(obj)
    }
}

/// Hidden per-object subclasses are torn down with their object. Hooks install the handler.
enum HiddenClassRegistry {
    nonisolated(unsafe) static var onObjectDeallocated: ((sf_id, RuntimeClass) -> Void)?

    static func objectDeallocated(_ obj: sf_id, hiddenClass: RuntimeClass) {
        onObjectDeallocated?(obj, hiddenClass)
    }
}

extension RuntimeClass {
    /// Creates an instance with zeroed ivars; the returned handle owns it.
    ///
    /// - Throws: `classNotRegistered` before `register()`, `invalidArgument` for a metaclass.
    public func createInstance() throws(RuntimeError) -> Object {
        guard !isMetaclass else {
            throw .invalidArgument(className: name, selector: "-", reason: "cannot instantiate a metaclass")
        }
        guard Runtime.state.lock.withLock({ isRegistered && !isDisposed }) else {
            throw .classNotRegistered(name: name, operation: "create an instance")
        }
        return Object(adopting: ObjectLifecycle.allocate(self))
    }
}
