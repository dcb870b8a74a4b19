import CDynamicRuntime
import Synchronization

/// One counter for every table, so a handle of one kind is never live in another's table.
private let handleCounter = Atomic<UInt>(0)

/// Opaque C handles (invocations, rules, clocks) checked against a table: a released or
/// foreign handle is found missing and reported, never dereferenced. Ids are never reused.
package final class CHandleTable<Value>: @unchecked Sendable {
    private struct Entry {
        var value: Value
        /// Lent to a callback: the callee may use it but not release it.
        var lent: Bool
    }

    private let entries = Locked<[UInt: Entry]>([:])
    /// What the handles are called in error messages ("invocation", "rule"…).
    package let kind: String

    /// A table whose handles are named `kind` in errors.
    package init(kind: String) {
        self.kind = kind
        ForkSafety.register(entries)
    }

    /// Registers `value` and returns its handle.
    package func insert(_ value: Value, lent: Bool = false) -> OpaquePointer {
        let id = handleCounter.wrappingAdd(1, ordering: .relaxed).newValue
        entries.withLock { $0[id] = Entry(value: value, lent: lent) }
        return OpaquePointer(bitPattern: id)!
    }

    /// The value behind `handle`, or an error naming what was wrong with it.
    package func lookup(_ handle: OpaquePointer?) throws(RuntimeError) -> Value {
        guard let handle else { throw .nullArgument(kind) }
        guard let e = entries.withLock({ $0[UInt(bitPattern: handle)] }) else { throw stale(handle) }
        return e.value
    }

    /// Drops a caller-owned handle; lent handles and unknown ones are refused.
    @discardableResult
    package func release(_ handle: OpaquePointer?) throws(RuntimeError) -> Value {
        guard let handle else { throw .nullArgument(kind) }
        let id = UInt(bitPattern: handle)
        let result = entries.withLock { t -> Result<Value, RuntimeError> in
            guard let e = t[id] else { return .failure(stale(handle)) }
            guard !e.lent else {
                return .failure(.invalidArgument(.init(expected: "a \(kind) the caller owns", actual: "\(kind) \(handle), lent to a callback and released by the runtime (copy it to keep it)")))
            }
            t[id] = nil
            return .success(e.value)
        }
        return try result.get()
    }

    /// Ends a loan made with `insert(_:lent: true)`.
    package func endLoan(_ handle: OpaquePointer) {
        // Dropped after the lock (which stays a leaf, for the fork handlers): the value's deinit
        // may release objects and re-enter the runtime.
        let removed = entries.withLock { $0.removeValue(forKey: UInt(bitPattern: handle)) }
        withExtendedLifetime(removed) {}
    }

    /// Lends `value` to `body` under a handle that dies when `body` returns.
    package func lend<R>(_ value: Value, _ body: (OpaquePointer) throws -> R) rethrows -> R {
        let h = insert(value, lent: true)
        defer { endLoan(h) }
        return try body(h)
    }

    /// Tests only: holds the table's lock, as a thread inside an operation does.
    package func lockForTesting() { entries.lock() }
    /// Tests only: releases what `lockForTesting()` took.
    package func unlockForTesting() { entries.unlock() }

    /// Live handles, for leak checks in tests.
    package var count: Int { entries.withLock { $0.count } }

    private func stale(_ handle: OpaquePointer) -> RuntimeError {
        .invalidArgument(.init(expected: "a live \(kind)", actual: "\(kind) \(handle) (released already, or never created)"))
    }
}

extension RuntimeClass {
    /// The class behind a C class pointer, for the C API's modules outside this one.
    package static func fromC(_ raw: sf_class_t) -> RuntimeClass { from(raw) }
}
