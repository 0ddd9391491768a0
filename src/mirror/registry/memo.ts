/**
 * Small content read by digest, kept for the rest of the run: a plan reads manifests and small
 * blobs (signature payloads, configs) that the copy then needs again. Content-addressed and
 * verified when read, so a hit is exactly what the registry would send; bounded in size.
 */
export class ContentMemo {
  private readonly items = new Map<string, { bytes: Buffer; mediaType: string }>();
  private bytes = 0;
  constructor(
    private readonly maxItem = 256 * 1024,
    private readonly maxTotal = 16 * 1024 * 1024,
  ) {}
  get(repo: string, digest: string): { bytes: Buffer; mediaType: string } | undefined {
    return this.items.get(`${repo}@${digest}`);
  }
  put(repo: string, digest: string, bytes: Buffer, mediaType = ''): void {
    const key = `${repo}@${digest}`;
    if (bytes.length > this.maxItem || this.bytes + bytes.length > this.maxTotal || this.items.has(key))
      return;
    this.items.set(key, { bytes, mediaType });
    this.bytes += bytes.length;
  }
}
