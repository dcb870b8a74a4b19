import CDynamicRuntime
import Glibc

extension Signature {
    /// Same machine types in every position (names of structs and receivers aside).
    func isCompatible(with other: Signature) -> Bool {
        // Equal nonzero keys: the same count and key code in every position (what the
        // element-wise check compares for everything but structs, which have no key).
        let key = storage.raw.pointee.key
        if storage === other.storage || (key != 0 && key == other.storage.raw.pointee.key) { return true }
        return argumentTypes.count == other.argumentTypes.count
            && returnType.isCompatible(with: other.returnType)
            && zip(argumentTypes.dropFirst(2), other.argumentTypes.dropFirst(2)).allSatisfy { $0.passedType.isCompatible(with: $1.passedType) }
    }
}
