// `import SelectorRunLoop` brings the runtime and the throttle API its types build on.
@_exported import MessageThrottle
