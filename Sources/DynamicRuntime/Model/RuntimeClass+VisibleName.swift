import CDynamicRuntime
import Glibc
import Synchronization

extension RuntimeClass {
    /// The name users know: a hidden per-object class reports its superclass's.
    var visibleName: String { isHidden ? (superclass?.name ?? name) : name }
}
