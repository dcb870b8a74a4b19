import CShims
import DynamicRuntime
#if canImport(Glibc)
import Glibc
#endif

/// A struct passed by value in the fixtures.
public struct FPoint: StructMessageValue, Equatable {
    public var x, y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    public static let typeEncoding = TypeEncoding.structure(name: "FPoint", fields: [.double, .double])
}

/// Dynamic and typed sends with argument lists built from the input, to a fixed set of
/// receivers (plain, subclass with a per-object hook, fast forwarder, forwardInvocation:,
/// resolver, NSProxy-style proxy, a forwarding loop, a class object, nil, a temporary). Every
/// call must return a value or throw a RuntimeError of an expected kind whose message names
/// the selector; afterwards no object is leaked or over-released, no error is left pending
/// on the thread, and `add:to:` computed the right sum.
///
/// Input layout (an exhausted input reads zeros): receiver, selector, path (dynamic / typed /
/// C), then for the dynamic path an argument count and one (kind, value…) group per argument,
/// for the typed path a shape and its values, for the C path which pointers are NULL.
enum SendFuzzer {
    static func run(_ data: [UInt8], options: FuzzOptions) -> FuzzResult {
        let world = FuzzWorld.shared
        var reader = ByteReader(data)
        let objectsBefore = FuzzWorld.liveObjects
        let retainsBefore = world.retainCounts()

        var call = Call(reader: &reader, world: world)
        if let bug = call.knownBug(world), !options.runs(bug) {
            call.release()
            return .skippedKnownBug(bug)
        }
        let outcome = call.perform(world)
        call.release()

        if let pending = sf_take_pending_error() {
            Unmanaged<AnyObject>.fromOpaque(pending).release()
            return .violation("\(call): an error was left pending on the thread")
        }
        if sf_forward_depth_enter() != 1 {
            sf_forward_depth_exit()
            return .violation("\(call): forwarding depth not back to zero")
        }
        sf_forward_depth_exit()
        let objectsAfter = FuzzWorld.liveObjects
        if objectsAfter != objectsBefore {
            return .violation("\(call): live objects \(objectsBefore) -> \(objectsAfter)")
        }
        let retainsAfter = world.retainCounts()
        if retainsAfter != retainsBefore {
            return .violation("\(call): retain counts of the fixtures changed \(retainsBefore) -> \(retainsAfter)")
        }
        return outcome
    }

    static func explain(_ data: [UInt8]) -> String {
        var reader = ByteReader(data)
        var call = Call(reader: &reader, world: FuzzWorld.shared)
        defer { call.release() }
        return call.description + (call.knownBug(FuzzWorld.shared).map { " (reaches \($0))" } ?? "")
    }

    /// Errors a caller may get from a send; anything else is a violation.
    static func kind(of error: RuntimeError) -> String? {
        switch error {
        case .doesNotRecognizeSelector: "doesNotRecognizeSelector"
        case .invalidArgument: "invalidArgument"
        case .signatureMismatch: "signatureMismatch"
        case .malformedEncoding: "malformedEncoding"
        case .forwardingFailed: "forwardingFailed"
        case .implementationFailed: "implementationFailed"
        // forwardInvocation: sent directly with a pointer that is not the record being forwarded.
        case .reservedSelector: "reservedSelector"
        default: nil
        }
    }
}

// MARK: - One call, decoded from the input

struct Call: CustomStringConvertible {
    enum Path { case dynamic, typed(Int), c }

    let receiverIndex: Int
    let receiver: ObjectRef
    /// A temporary receiver (released by `release()`).
    var temporary: Object?
    let selector: Selector
    let path: Path
    var arguments: [any MessageArgument] = []
    /// Typed-path values.
    var ints: [Int64] = []
    var doubles: [Double] = []
    var dynamicArgument: DynamicValue = .void
    /// C path: which argument pointers are NULL, and whether ret is NULL.
    var cNullMask: UInt8 = 0
    var cArgsNull = false
    var cRetNull = false

    init(reader: inout ByteReader, world: FuzzWorld) {
        receiverIndex = reader.choose(FuzzWorld.receiverCount)
        if receiverIndex == FuzzWorld.temporaryReceiver {
            temporary = try? world.calc.createInstance()
            receiver = temporary?.ref ?? .nil
        } else {
            receiver = world.receiver(receiverIndex)
        }
        let s = reader.choose(FuzzWorld.selectorNames.count + 8)
        if s < FuzzWorld.selectorNames.count {
            selector = world.selectors[s]
        } else {
            // A name from a tiny alphabet: arbitrary but bounded (selectors are never freed).
            var name = ""
            for _ in 0..<(1 + reader.choose(3)) { name.append(["a", ":", "b"][reader.choose(3)]) }
            selector = Selector(name)
        }
        switch reader.choose(8) {
        case 0...3: path = .dynamic
        case 4...6: path = .typed(reader.choose(Call.typedShapes))
        default: path = .c
        }
        switch path {
        case .dynamic:
            for _ in 0..<reader.choose(8) { arguments.append(Call.argument(&reader, world)) }
        case .typed:
            ints = (0..<4).map { _ in reader.interestingInt() }
            doubles = (0..<2).map { _ in reader.double() }
            dynamicArgument = Call.argument(&reader, world) as? DynamicValue ?? .void
        case .c:
            cNullMask = reader.byte()
            cArgsNull = reader.choose(8) == 0
            cRetNull = reader.choose(8) == 0
        }
    }

    var description: String {
        let args: String
        switch path {
        case .dynamic: args = "dynamic(" + arguments.map { "\($0)" }.joined(separator: ", ") + ")"
        case let .typed(shape): args = "typed#\(shape)(ints: \(ints), doubles: \(doubles), dynamic: \(dynamicArgument))"
        case .c: args = "sf_msg_send(nullMask: \(cNullMask), args: \(cArgsNull ? "NULL" : "…"), ret: \(cRetNull ? "NULL" : "…"))"
        }
        return "[\(FuzzWorld.receiverNames[receiverIndex]) \(selector.name)] \(args)"
    }

    mutating func release() { temporary = nil }

    // MARK: argument values

    static func argument(_ r: inout ByteReader, _ world: FuzzWorld) -> any MessageArgument {
        switch r.choose(24) {
        case 0: return Int(r.interestingInt())
        case 1: return Int32(truncatingIfNeeded: r.interestingInt())
        case 2: return r.double()
        case 3: return Float(r.double())
        case 4: return r.byte() & 1 == 1
        case 5: return ObjectRef.nil
        case 6: return world.calcInstance.ref
        case 7: return world.calcInstance
        case 8: return CString(world.cStrings[r.choose(world.cStrings.count)])
        case 9: return CString(nil)
        case 10: return world.selectors[r.choose(world.selectors.count)]
        case 11: return DynamicValue.selector(nil)
        case 12: return UnsafeRawPointer(world.buffer)
        case 13: return DynamicValue.pointer(nil)
        case 14: return ClassRef(world.calc)
        case 15: return DynamicValue.classObject(ClassRef(raw: nil))
        case 16:
            let v = r.interestingInt()
            return [DynamicValue.int8(Int8(truncatingIfNeeded: v)), .uint8(UInt8(truncatingIfNeeded: v)),
                    .int16(Int16(truncatingIfNeeded: v)), .uint16(UInt16(truncatingIfNeeded: v)),
                    .int32(Int32(truncatingIfNeeded: v)), .uint32(UInt32(truncatingIfNeeded: v)),
                    .int64(v), .uint64(UInt64(bitPattern: v)), .bool(v & 1 == 1),
                    .float(Float(bitPattern: UInt32(truncatingIfNeeded: v))), .double(Double(bitPattern: UInt64(bitPattern: v)))][r.choose(11)]
        case 17:
            // A struct value: its encoding and a byte count that usually fits it.
            let (type, size) = FuzzWorld.structShapes[r.choose(FuzzWorld.structShapes.count)]
            let count: Int
            switch r.choose(4) {
            case 0: count = Int(r.byte()) % 80
            default: count = size
            }
            return DynamicValue.structure(type, (0..<count).map { _ in r.byte() })
        case 18: return DynamicValue.void
        case 19: return FPoint(x: r.double(), y: r.double())
        case 20: return DynamicValue.object(r.byte() & 1 == 1 ? world.calcInstance : nil)
        case 21: return DynamicValue.cString(CString(world.cStrings[r.choose(world.cStrings.count)]))
        case 22: return Int8(truncatingIfNeeded: r.interestingInt())
        default: return UInt64(bitPattern: r.interestingInt())
        }
    }

    // MARK: known bugs

    /// The open bug this call would hit (docs/reliability.md), if any. None today: KB-2, KB-5
    /// and KB-8, which the send target used to skip, are fixed and run like any input.
    func knownBug(_ world: FuzzWorld) -> String? {
        nil
    }

    // MARK: performing

    static let typedShapes = 16

    func perform(_ world: FuzzWorld) -> FuzzResult {
        do {
            switch path {
            case .dynamic:
                let value = try receiver.send(selector, arguments: arguments)
                if let wrong = world.checkDynamicResult(self, value) { return .violation(wrong) }
                _ = value.description
            case let .typed(shape):
                if let wrong = try performTyped(shape, world) { return .violation(wrong) }
            case .c:
                return performC(world)
            }
            return .accepted
        } catch {
            guard let kind = SendFuzzer.kind(of: error) else { return .violation("\(self): unexpected error \(error)") }
            let message = error.description
            if message.isEmpty { return .violation("\(self): empty error message") }
            if case .malformedEncoding = error {} else if !message.contains(selector.name) {
                return .violation("\(self): \(kind) message does not name the selector: \(message)")
            }
            return .rejected(kind)
        }
    }

    private func performTyped(_ shape: Int, _ world: FuzzWorld) throws(RuntimeError) -> String? {
        let r = receiver
        let a = Int(ints[0]), b = Int(ints[1])
        switch shape {
        case 0: let _: Int = try r.send(selector)
        case 1: let _: Int = try r.send(selector, a)
        case 2:
            let sum: Int = try r.send(selector, a, b)
            if world.computesSum(receiverIndex, selector), sum != a &+ b { return "\(self): add:to: returned \(sum)" }
        case 3: let _: Double = try r.send(selector, doubles[0])
        case 4: let _: FPoint = try r.send(selector, FPoint(x: doubles[0], y: doubles[1]))
        case 5: let _: Object? = try r.send(selector, world.calcInstance.ref)
        case 6: let _: Selector = try r.send(selector, world.selectors[Int(UInt8(truncatingIfNeeded: a)) % world.selectors.count])
        case 7: let _: Int = try r.send(selector, CString(world.cStrings[Int(UInt8(truncatingIfNeeded: b)) % world.cStrings.count]))
        case 8: let _: Int32 = try r.send(selector, Int8(truncatingIfNeeded: a), Int16(truncatingIfNeeded: b),
                                          UInt16(truncatingIfNeeded: ints[2]), UInt8(truncatingIfNeeded: ints[3]))
        case 9: try r.send(selector, as: Void.self)
        case 10: let _: Int = try r.send(selector, dynamicArgument)
        case 11: let _: Bool = try r.send(selector, a & 1 == 1)
        case 12: let _: Float = try r.send(selector, Float(doubles[0]))
        case 13: let _: CString = try r.send(selector)
        case 14: let _: ClassRef = try r.send(selector, ClassRef(world.calc))
        default: try r.send(selector, a, b, doubles[0], as: Void.self)
        }
        return nil
    }

    private func performC(_ world: FuzzWorld) -> FuzzResult {
        // Eight zeroed 64-byte argument buffers (enough for every fixture type), some NULL.
        let buffers = UnsafeMutableRawPointer.allocate(byteCount: 8 * 64, alignment: 16)
        buffers.initializeMemory(as: UInt8.self, repeating: 0, count: 8 * 64)
        let argv = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 8)
        let ret = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        ret.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
        defer { buffers.deallocate(); argv.deallocate(); ret.deallocate() }
        for i in 0..<8 { argv[i] = cNullMask & (1 << i) != 0 ? nil : buffers + 64 * i }
        let status = sf_msg_send(receiver.raw, selector.raw, cRetNull ? nil : ret, cArgsNull ? nil : argv)
        if status == SF_OK {
            // Object returns are +1 for the caller.
            if !cRetNull, FuzzWorld.returnsObject.contains(selector.name), let o = ret.load(as: sf_id?.self) { sf_release(o) }
            return .accepted
        }
        let message = String(cString: sf_last_error_message())
        guard sf_last_error() == status, !message.isEmpty else {
            return .violation("\(self): status \(status.rawValue) with last error \(sf_last_error().rawValue) \(message.debugDescription)")
        }
        switch status {
        case SF_ERR_NIL_RECEIVER, SF_ERR_INVALID_ARGUMENT, SF_ERR_UNRECOGNIZED_SELECTOR, SF_ERR_SIGNATURE_MISMATCH,
             SF_ERR_FORWARDING, SF_ERR_BAD_ENCODING, SF_ERR_RESERVED_SELECTOR:
            return .rejected("C:\(status.rawValue)")
        default:
            return .violation("\(self): unexpected status \(status.rawValue) \(message)")
        }
    }
}

// MARK: - The fixtures

/// Classes and objects every input talks to; created once per process.
final class FuzzWorld: @unchecked Sendable {
    static let shared: FuzzWorld = {
        do { return try FuzzWorld() } catch { fatalError("fuzz fixtures: \(error)") }
    }()

    static var liveObjects: Int { Int(sf_counter_objects()) }

    static let selectorNames = [
        "add:to:", "neg:", "half:", "flag:", "narrow:b:c:d:", "name", "echo:", "pt:", "sel:", "cls:", "ptr:", "len:",
        "fail:", "keep:", "wide:b:c:d:e:f:", "make", "nothing", "hooked:", "dyn1", "dyn2:",
        // unknown, wrong arity, reserved
        "missing", "add:", "add:to:extra:", "dealloc", "forwardInvocation:", "methodSignatureForSelector:",
        "forwardingTargetForSelector:", "resolveInstanceMethod:", "doesNotRecognizeSelector:", "",
    ]
    static let returnsObject: Set<String> = ["echo:", "make", "forwardingTargetForSelector:"]
    static let receiverNames = ["calc", "hookedSub", "forwarder", "invoker", "resolver", "proxy", "loop", "Calc(class)", "nil", "temporary"]
    static var receiverCount: Int { receiverNames.count }
    static let temporaryReceiver = 9

    static let structShapes: [(TypeEncoding, Int)] = [
        (FPoint.typeEncoding, 16),
        (.structure(name: "S1", fields: [.int8]), 1),
        (.structure(name: "Big", fields: Array(repeating: .int64, count: 8)), 64),
        (.structure(name: "N", fields: [FPoint.typeEncoding, .int32]), 24),
        (.int64, 8),
    ]

    static func size(of t: TypeEncoding) -> Int {
        guard let sig = try? Signature("v@:" + t.encoding) else { return -1 }
        return Int(sf_ffi_type_size(sig.raw.pointee.arg_types[2]!))
    }

    let calc, sub, forwarder, invoker, resolver, proxyClass, loop: RuntimeClass
    let calcInstance: Object
    let objects: [Object]
    let selectors: [Selector]
    let cStrings: [UnsafePointer<CChar>]
    let buffer: UnsafeMutableRawPointer
    private var hooks: [HookToken] = []

    private init() throws {
        selectors = FuzzWorld.selectorNames.map { (name: String) -> Selector in Selector(name) }
        let texts: [String] = ["", "SFFuzz", "é\u{1}ü", String(repeating: "x", count: 300)]
        cStrings = texts.map { (t: String) -> UnsafePointer<CChar> in UnsafePointer(strdup(t)!) }
        buffer = .allocate(byteCount: 256, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 256)

        calc = try RuntimeClass(name: "SFFuzz.Calc")
        try calc.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a &+ b }
        try calc.addMethod("neg:") { (_: ObjectRef, x: Double) in -x }
        try calc.addMethod("half:") { (_: ObjectRef, x: Float) in x / 2 }
        try calc.addMethod("flag:") { (_: ObjectRef, b: Bool) in !b }
        try calc.addMethod("narrow:b:c:d:") { (_: ObjectRef, a: Int8, b: Int16, c: UInt16, d: UInt8) -> Int32 in
            Int32(a) &+ Int32(b) &+ Int32(c) &+ Int32(d)
        }
        nonisolated(unsafe) let name = cStrings[1]
        try calc.addMethod("name") { (_: ObjectRef) in CString(name) }
        try calc.addMethod("echo:") { (_: ObjectRef, o: ObjectRef) -> Object? in o.retained() }
        try calc.addMethod("pt:") { (_: ObjectRef, p: FPoint) in FPoint(x: p.y, y: p.x) }
        try calc.addMethod("sel:") { (_: ObjectRef, s: Selector) in s }
        try calc.addMethod("cls:") { (_: ObjectRef, c: ClassRef) in c }
        // No Optional pointer conformance exists: a raw body passes NULL through untouched.
        try calc.addMethod("ptr:", types: "^v@:^v") { ret, args in ret.copyMemory(from: args[2]!, byteCount: 8) }
        try calc.addMethod("len:") { (_: ObjectRef, s: CString) -> Int in
            guard let p = s.pointer else { return -1 }
            return Int(strlen(p))
        }
        struct Odd: Error {}
        try calc.addMethod("fail:") { (_: ObjectRef, n: Int) throws -> Int in
            if n & 1 == 1 { throw Odd() }
            return n
        }
        try calc.addMethod("keep:") { (_: ObjectRef, o: Object) -> Int in o.retainCount > 0 ? 1 : 0 }
        try calc.addMethod("wide:b:c:d:e:f:", types: "v@:qqqqqd") { _, _ in }
        try calc.addMethod("nothing") { (_: ObjectRef) in }
        try calc.addMethod("hooked:") { (_: ObjectRef, n: Int) in n }
        let made = calc
        try calc.metaclass.addMethod("make") { (_: ObjectRef) -> Object? in try? made.createInstance() }

        sub = try RuntimeClass(name: "SFFuzz.Sub", superclass: calc)

        forwarder = try RuntimeClass(name: "SFFuzz.Forwarder", ivars: [("other", .object)])
        invoker = try RuntimeClass(name: "SFFuzz.Invoker", ivars: [("other", .object)])
        resolver = try RuntimeClass(name: "SFFuzz.Resolver")
        loop = try RuntimeClass(name: "SFFuzz.Loop")

        calcInstance = try calc.createInstance()
        let subInstance = try sub.createInstance()
        let f = try forwarder.createInstance()
        let i = try invoker.createInstance()
        let r = try resolver.createInstance()
        let l = try loop.createInstance()
        try f.setValue(calcInstance.ref, forIvar: "other")
        try i.setValue(calcInstance.ref, forIvar: "other")

        try forwarder.setForwardingTarget { recv, _ in try recv.value(ofIvar: "other", as: ObjectRef.self) }
        try invoker.setForwardInvocation { inv in
            _ = inv.argumentValues.map(\.description)
            _ = inv.description
            let target = try inv.target.value(ofIvar: "other", as: ObjectRef.self)
            if target.responds(to: inv.selector) { try inv.invoke(target: target) }
        }
        try resolver.setResolveInstanceMethod { cls, sel in
            switch sel.name {
            case "dyn1": try cls.addMethod(sel) { (_: ObjectRef) in 1 }
            case "dyn2:": try cls.addMethod(sel) { (_: ObjectRef, x: Int) in x &* 2 }
            default: return false
            }
            return true
        }
        try loop.setForwardInvocation { inv in try inv.invoke() }

        proxyClass = try Proxy.makeClass(name: "SFFuzz.Proxy") { inv, proceed in
            _ = inv.argumentValues
            try proceed()
        }
        let p = try Proxy.create(proxyClass, wrapping: calcInstance)

        // Hooks that read every argument and the return value.
        hooks.append(try calc.hook("hooked:", .before) { ctx in _ = ctx.argumentValues })
        hooks.append(try calc.hook("hooked:", .after) { ctx in
            _ = ctx.returnValue
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self))
        })
        hooks.append(try subInstance.hook("pt:", .instead) { ctx in
            _ = ctx.argumentValues
            try ctx.proceed()
        })
        hooks.append(try subInstance.hook("add:to:", .after) { ctx in _ = try ctx.returnValue(as: Int.self) })

        objects = [calcInstance, subInstance, f, i, r, p, l]

        // KB-6 workaround: a class whose cache is still the shared empty cache can spin forever
        // in sf_cache_probe while a retired cache is pending. One lookup per class and
        // metaclass gives each its own cache for good (flushes keep the allocation).
        // The forwarding stages also look up the receiver's metaclass, and a hooked object has
        // a hidden class with its own metaclass: warm the whole isa chain of every receiver.
        let probe = Selector("SFFuzz.warmUp")
        var pending = objects.map { sf_object_isa($0.raw) } + [calc.raw, sub.raw, forwarder.raw, invoker.raw, resolver.raw, proxyClass.raw, loop.raw]
        var seen = Set<UnsafeMutableRawPointer>()
        while let next = pending.popLast() {
            guard let c = next, seen.insert(UnsafeMutableRawPointer(c)).inserted else { continue }
            // Through the Swift entry point: the C ones (dispatch.c) are compiled with ASan, which
            // reports KB-6's out-of-bounds read of the empty cache on every first lookup.
            _ = sf_class_respondsToSelector(c, probe.raw)
            pending.append(sf_class_getSuperclass(c))
            pending.append(sf_object_isa(sf_class_as_object(c)))
        }
    }

    func receiver(_ index: Int) -> ObjectRef {
        switch index {
        case 0..<objects.count: objects[index].ref
        case 7: calc.receiver
        default: .nil
        }
    }

    func implementsForwardInvocation(_ index: Int) -> Bool { [3, 5, 6].contains(index) }

    /// Receivers whose `add:to:` is the fixture's sum (directly, forwarded or proxied).
    func computesSum(_ index: Int, _ selector: Selector) -> Bool {
        selector.name == "add:to:" && [0, 1, 2, 3, 5, 9].contains(index)
    }

    func retainCounts() -> [Int] { objects.map(\.retainCount) }

    func checkDynamicResult(_ call: Call, _ value: DynamicValue) -> String? {
        guard computesSum(call.receiverIndex, call.selector), call.arguments.count == 2,
              let a = call.arguments[0] as? Int, let b = call.arguments[1] as? Int else { return nil }
        return value.intValue == a &+ b ? nil : "\(call): add:to: returned \(value)"
    }
}
