import CShims
import Glibc

/// A message as data: target, selector, signature, argument storage and return storage.
///
/// Invocations are what `forwardInvocation:` receives and what hooks keep for replay. An
/// `Invocation` is a handle: copies share one record. Arguments live inline in the record's
/// single allocation. Call `retainArguments()` before keeping a record beyond the call that
/// made it: it retains the target and object arguments and copies C strings.
public struct Invocation: @unchecked Sendable, CustomStringConvertible {
    var storage: InvocationStorage

    /// A zeroed invocation for `signature`, to fill with `setArgument` and `invoke`.
    public init(signature: Signature, target: some MessageReceiver, selector: Selector) {
        storage = InvocationStorage.make(signature.storage)
        storage.header.target = target.receiver.raw
        storage.header.selector = selector.raw
        storage.writeTargetAndSelector()
    }

    init(storage: InvocationStorage) { self.storage = storage }

    /// Copies a live call's frame (receiver, selector, arguments) into a new record.
    static func capture(signature: SignatureStorage, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Invocation {
        let s = InvocationStorage.make(signature)
        s.fill(from: arguments)
        return Invocation(storage: s)
    }

    /// Whether two handles refer to the same record.
    public static func === (a: Invocation, b: Invocation) -> Bool { a.storage === b.storage }

    /// Whether this handle is the only reference to its record (so it can be reused).
    public mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// The method's types.
    public var signature: Signature { Signature(storage: storage.header.signature) }
    /// Arguments after the receiver and selector.
    public var argumentCount: Int { storage.header.signature.argumentTypes.count - 2 }
    /// Whether `retainArguments()` has been called.
    public var argumentsRetained: Bool { storage.header.argumentsRetained }

    /// The receiver. Setting it retains the new one when arguments are retained.
    public var target: ObjectRef {
        get { ObjectRef(storage.header.target) }
        nonmutating set { storage.setTarget(newValue.raw) }
    }

    /// The selector to send.
    public var selector: Selector {
        get { Selector(raw: storage.header.selector) }
        nonmutating set {
            storage.header.selector = newValue.raw
            storage.writeTargetAndSelector()
        }
    }

    private func check(_ index: Int, _ type: TypeEncoding) throws(RuntimeError) -> TypeEncoding {
        let types = storage.header.signature.argumentTypes
        guard index >= 0, index < types.count - 2 else {
            throw .invalidArgument(className: className, selector: selector.name,
                                   reason: "argument index \(index) out of range 0..<\(types.count - 2)")
        }
        let want = types[index + 2]
        guard want.isCompatible(with: type) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: storage.header.signature.encoding,
                                     actual: "argument \(index) read or written as '\(type.encoding)'")
        }
        return want
    }

    var className: String {
        guard let t = storage.header.target, let c = sf_object_getClass(t) else { return "nil" }
        return String(cString: sf_class_getName(c))
    }

    /// Argument `index` (0 is the first after the selector), checked against the signature.
    public func argument<T: MessageArgument>(at index: Int, as _: T.Type = T.self) throws(RuntimeError) -> T {
        _ = try check(index, T.typeEncoding)
        return T(argumentStorage: storage.argumentPointer(index + 2))
    }

    /// Sets argument `index`; retains objects and copies C strings if arguments are retained.
    public func setArgument<T: MessageArgument>(_ value: T, at index: Int) throws(RuntimeError) {
        let type = (value as? DynamicValue)?.typeEncoding ?? T.typeEncoding
        let want = try check(index, type)
        try (value as? DynamicValue)?.checkByteCount(size: storage.header.signature.argumentSizes[index + 2], of: want,
                                                     what: "argument \(index + 1)", className: className, selector: selector.name)
        storage.setArgument(index + 2, type: want) { value.storeArgument(to: $0) }
    }

    /// Argument `index` as a dynamic value.
    public func argumentValue(at index: Int) throws(RuntimeError) -> DynamicValue {
        let types = storage.header.signature.argumentTypes
        guard index >= 0, index < types.count - 2 else {
            throw .invalidArgument(className: className, selector: selector.name,
                                   reason: "argument index \(index) out of range 0..<\(types.count - 2)")
        }
        return DynamicValue.load(types[index + 2], from: storage.argumentPointer(index + 2), isReturn: false)
    }

    /// All arguments after the selector, as dynamic values.
    public var argumentValues: [DynamicValue] {
        (0..<argumentCount).map { (try? argumentValue(at: $0)) ?? .void }
    }

    /// The return value (objects come back retained for the caller).
    public func returnValue<T: MessageReturn>(as _: T.Type = T.self) throws(RuntimeError) -> T {
        let sig = storage.header.signature
        guard sig.returnType.isCompatible(with: T.returnEncoding) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: sig.encoding,
                                     actual: "return value read as '\(T.returnEncoding.encoding)'")
        }
        if sig.returnType == .object, let o = storage.returnPointer.load(as: sf_id?.self) { sf_retain_inline(o) }
        return T(returnStorage: storage.returnPointer)
    }

    /// The return value as a dynamic value.
    public var returnValue: DynamicValue {
        DynamicValue.load(storage.header.signature.returnType, from: storage.returnPointer, isReturn: false)
    }

    /// Sets the return value the caller will receive.
    public func setReturnValue<T: MessageReturn>(_ value: T) throws(RuntimeError) {
        let sig = storage.header.signature
        guard sig.returnType.isCompatible(with: T.returnEncoding) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: sig.encoding,
                                     actual: "return value set as '\(T.returnEncoding.encoding)'")
        }
        storage.clearReturn()
        value.storeReturn(to: storage.returnPointer)
        storage.header.ownsReturnObject = sig.returnType == .object
    }

    /// Retains the target and object arguments and copies C strings, so the record can outlive
    /// the call and be replayed later, on any thread. Idempotent.
    public func retainArguments() { storage.retainArguments() }

    /// The implementation a replay calls when the record came from a hook; nil means lookup.
    public var implementation: IMP? { storage.header.implementation }

    /// Sends the message to `target`: through `implementation` for a record a hook captured,
    /// otherwise with full lookup (and forwarding on a miss).
    public func invoke() throws(RuntimeError) {
        guard let target = storage.header.target else {
            storage.clearReturn()
            return
        }
        if let imp = storage.header.implementation {
            try invoke(using: imp)
            return
        }
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let cls = sf_object_isa(target)!
        storage.clearReturn()
        guard let method = sf_lookup_method(cls, storage.header.selector) else {
            try Forwarding.forward(storage, cls: cls)
            return
        }
        let sig = Signature(raw: sf_method_sig(method))
        guard sig == signature || sig.isCompatible(with: signature) else {
            throw .signatureMismatch(className: className, selector: selector.name, expected: sig.encoding, actual: signature.encoding)
        }
        storage.call(sf_method_imp(method)!)
        try Runtime.rethrowPending()
    }

    /// Sends the message to another receiver, with full lookup on it.
    public func invoke(target: some MessageReceiver) throws(RuntimeError) {
        self.target = target.receiver
        storage.header.implementation = nil
        try invoke()
    }

    /// Calls `imp` directly with the stored arguments (no lookup).
    public func invoke(using imp: IMP) throws(RuntimeError) {
        storage.clearReturn()
        Runtime.discardStalePending()
        withExtendedLifetime(imp) {
            storage.call(imp.pointer)
        }
        try Runtime.rethrowPending()
    }

    public var description: String {
        let args = argumentValues.map(\.description).joined(separator: ", ")
        return "<Invocation -[\(className) \(selector.name)](\(args)) \(signature.encoding)>"
    }
}

extension Signature {
    /// Same machine types in every position (names of structs and receivers aside).
    func isCompatible(with other: Signature) -> Bool {
        argumentTypes.count == other.argumentTypes.count
            && returnType.isCompatible(with: other.returnType)
            && zip(argumentTypes.dropFirst(2), other.argumentTypes.dropFirst(2)).allSatisfy { $0.isCompatible(with: $1) }
    }
}

struct InvocationHeader {
    var signature: SignatureStorage
    var target: sf_id?
    var selector: sf_sel
    var argumentsRetained = false
    var ownsReturnObject = false
    var copiedStrings: [UnsafeMutablePointer<CChar>] = []
    /// Set for calls captured by a hook: replay calls this IMP, not the hooked method.
    var implementation: IMP?
    let frameOffset: Int
    let returnOffset: Int
    let argvOffset: Int
}

/// The record: a header and, in the same allocation, the frame, return storage and argv.
final class InvocationStorage: ManagedBuffer<InvocationHeader, UInt64> {
    static func make(_ sig: SignatureStorage) -> InvocationStorage {
        let frame = (Int(sig.raw.pointee.frame_size) + 15) & ~15
        let ret = (sig.returnSize + 15) & ~15
        let argv = sig.argumentTypes.count * MemoryLayout<UnsafeMutableRawPointer>.stride
        let words = (frame + ret + argv) / 8 + 2
        let made = InvocationStorage.create(minimumCapacity: words) { _ in
            InvocationHeader(signature: sig, target: nil, selector: sf_sel(bitPattern: 1)!,
                             frameOffset: 0, returnOffset: frame, argvOffset: frame + ret)
        }
        let s = unsafeDowncast(made, to: InvocationStorage.self)
        s.withUnsafeMutablePointerToElements { base in
            let raw = UnsafeMutableRawPointer(base)
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: words * 8)
            let argvPtr = (raw + frame + ret).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            for i in 0..<sig.argumentTypes.count { argvPtr[i] = raw + sig.argumentOffsets[i] }
        }
        return s
    }

    deinit {
        clearReturn()
        releaseRetained()
    }

    var base: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) }
    }
    /// The argument vector for libffi, rebuilt on every use: libffi's x86-64 ffi_call points the
    /// entries of structs larger than 16 bytes at copies in its own frame, which are dead once
    /// it returns, so a vector that has been called with must not be trusted again.
    var argv: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        let base = self.base
        let v = (base + header.argvOffset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        let offsets = header.signature.argumentOffsets
        for i in offsets.indices { v[i] = base + offsets[i] }
        return v
    }
    var returnPointer: UnsafeMutableRawPointer { base + header.returnOffset }
    func argumentPointer(_ i: Int) -> UnsafeMutableRawPointer { base + header.signature.argumentOffsets[i] }

    func writeTargetAndSelector() {
        argumentPointer(0).storeBytes(of: header.target, as: sf_id?.self)
        argumentPointer(1).storeBytes(of: header.selector, as: sf_sel.self)
    }

    /// Copies a live frame's values (borrowed: no retains until `retainArguments`).
    func fill(from arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let sig = header.signature
        for i in 0..<sig.argumentTypes.count {
            argumentPointer(i).copyMemory(from: arguments[i]!, byteCount: sig.argumentSizes[i])
        }
        header.target = argumentPointer(0).load(as: sf_id?.self)
        header.selector = argumentPointer(1).load(as: sf_sel.self)
    }

    /// Reuses this record for a new call with the same signature: drops what the previous call
    /// retained, copies the new frame and retains it. Allocates nothing for objects and scalars.
    func refill(from arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let keep = header.argumentsRetained
        clearReturn()
        releaseRetained()
        fill(from: arguments)
        if keep { retainArguments() }
    }

    /// Retains `o` for a record that may outlive the call; a deallocating object (a capture
    /// made from its dealloc observer) becomes nil: it is freed when the observers return.
    static func retainForCapture(_ o: sf_id?) -> sf_id? {
        guard let o else { return nil }
        if sf_object_flags(o) & UInt32(SF_OBJ_DEALLOCATING) != 0 { return nil }
        sf_retain_inline(o)
        return o
    }

    func setTarget(_ t: sf_id?) {
        var t = t
        if header.argumentsRetained {
            t = Self.retainForCapture(t)
            if let old = header.target { sf_release_inline(old) }
        }
        header.target = t
        writeTargetAndSelector()
    }

    func setArgument(_ i: Int, type: TypeEncoding, _ write: (UnsafeMutableRawPointer) -> Void) {
        let p = argumentPointer(i)
        guard header.argumentsRetained else {
            write(p)
            return
        }
        switch type {
        case .object:
            let old = p.load(as: sf_id?.self)
            write(p)
            p.storeBytes(of: Self.retainForCapture(p.load(as: sf_id?.self)), as: sf_id?.self)
            if let old { sf_release_inline(old) }
        case .cString:
            write(p)
            if let s = p.load(as: UnsafePointer<CChar>?.self), let copy = strdup(s) {
                header.copiedStrings.append(copy)
                p.storeBytes(of: UnsafePointer(copy), as: UnsafePointer<CChar>?.self)
            }
        default:
            write(p)
        }
    }

    func retainArguments() {
        guard !header.argumentsRetained else { return }
        header.argumentsRetained = true
        if header.target != nil {
            header.target = Self.retainForCapture(header.target)
            if header.target == nil { writeTargetAndSelector() }
        }
        let types = header.signature.argumentTypes
        for i in 2..<max(types.count, 2) {
            let p = argumentPointer(i)
            switch types[i] {
            case .object:
                p.storeBytes(of: Self.retainForCapture(p.load(as: sf_id?.self)), as: sf_id?.self)
            case .cString:
                if let s = p.load(as: UnsafePointer<CChar>?.self), let copy = strdup(s) {
                    header.copiedStrings.append(copy)
                    p.storeBytes(of: UnsafePointer(copy), as: UnsafePointer<CChar>?.self)
                }
            default:
                break
            }
        }
    }

    func releaseRetained() {
        header.implementation = nil
        guard header.argumentsRetained else { return }
        header.argumentsRetained = false
        if let t = header.target { sf_release_inline(t) }
        let types = header.signature.argumentTypes
        for i in 2..<max(types.count, 2) where types[i] == .object {
            if let o = argumentPointer(i).load(as: sf_id?.self) { sf_release_inline(o) }
        }
        for s in header.copiedStrings { free(s) }
        header.copiedStrings.removeAll(keepingCapacity: true)
    }

    /// Drops an object the return storage owns and zeroes it.
    func clearReturn() {
        if header.ownsReturnObject, let o = returnPointer.load(as: sf_id?.self) {
            sf_release_inline(o)
        }
        header.ownsReturnObject = false
        returnPointer.initializeMemory(as: UInt8.self, repeating: 0, count: header.signature.returnSize)
    }

    /// Calls `imp` with the frame; the result (+1 for objects) lands in return storage.
    func call(_ imp: sf_imp) {
        writeTargetAndSelector()
        sf_ffi_call(&header.signature.raw.pointee.cif, imp, returnPointer, argv)
        header.ownsReturnObject = header.signature.returnType == .object
    }

    /// Bytes a direct libffi call writes for this return type, which is all a caller's storage
    /// must hold: a word for integers and pointers (ffi_arg), 4 for a float, a struct's own
    /// size, nothing for void. `returnSize` rounds up to a word and would overrun a C caller's
    /// `float` or 3-byte struct.
    var returnValueByteCount: Int {
        let sig = header.signature
        switch sig.returnType {
        case .void: return 0
        case .float, .double, .structure: return Int(sf_ffi_type_size(sig.raw.pointee.return_type))
        default: return MemoryLayout<UInt64>.size
        }
    }

    /// Copies the return value out to a caller, giving it its own +1 for objects.
    func copyReturn(to destination: UnsafeMutableRawPointer) {
        destination.copyMemory(from: returnPointer, byteCount: returnValueByteCount)
        if header.signature.returnType == .object, let o = returnPointer.load(as: sf_id?.self) {
            if header.ownsReturnObject {
                // Ownership moves to the caller.
                header.ownsReturnObject = false
                returnPointer.storeBytes(of: nil, as: sf_id?.self)
            } else {
                sf_retain_inline(o)
            }
        }
    }
}
