import CDynamicRuntime
import DynamicRuntime

/// One call of `SendFuzzer`, decoded from the input: receiver, selector, path and arguments.
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

    /// The open bug this call would hit (docs/reliability.md), if any. None: KB-2, KB-5 and
    /// KB-8 are fixed, so the send target runs their inputs like any other.
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
