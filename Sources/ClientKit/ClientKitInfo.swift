/// ClientKit: typed API requests.
public enum ClientKitInfo {}
