import Synchronization

/// A class name no other test in the process uses: `base` (letters and digits only) plus a
/// process-wide counter. Class names are process-wide, so every test makes its own.
package func uniqueClassName(_ base: String) -> String {
    let stem = base.filter { $0.isLetter || $0.isNumber }
    return "\(stem)_\(nameCounter.add(1, ordering: .relaxed).newValue)"
}

private let nameCounter = Atomic<Int>(0)
