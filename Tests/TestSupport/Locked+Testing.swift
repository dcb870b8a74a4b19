import DynamicRuntime

// Values shared across threads and closures in tests live in the runtime's own `Locked` box;
// these read, write and collect without spelling out `withLock`.
extension Locked {
    /// A copy of the value.
    package var current: State { withLock { $0 } }

    /// Replaces the value.
    package func set(_ value: State) { withLock { $0 = value } }

    /// Appends to an array value.
    package func append<E>(_ element: E) where State == [E] { withLock { $0.append(element) } }

    /// Empties an array value and returns what it held.
    package func take<E>() -> [E] where State == [E] {
        withLock { (v: inout [E]) -> [E] in defer { v = [] }; return v }
    }
}
