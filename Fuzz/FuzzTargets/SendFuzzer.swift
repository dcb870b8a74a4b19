import CDynamicRuntime
import DynamicRuntime
#if canImport(Glibc)
import Glibc
#endif

/// A struct passed by value in the fixtures.
public struct FPoint: StructMessageValue, Equatable {
    /// The coordinates.
    public var x, y: Double
    /// A point at (`x`, `y`).
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    /// `{FPoint=dd}`.
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
