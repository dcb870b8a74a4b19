import CShims
import Glibc

extension Signature {
    /// Same machine types in every position (names of structs and receivers aside).
    func isCompatible(with other: Signature) -> Bool {
        argumentTypes.count == other.argumentTypes.count
            && returnType.isCompatible(with: other.returnType)
            && zip(argumentTypes.dropFirst(2), other.argumentTypes.dropFirst(2)).allSatisfy { $0.isCompatible(with: $1) }
    }
}
