@_exported import DynamicRuntime
