/** The manifest and blob media types the engine handles (OCI image-spec and Docker v2 schema 2). */
export const MediaType = {
  OciManifest: 'application/vnd.oci.image.manifest.v1+json',
  OciIndex: 'application/vnd.oci.image.index.v1+json',
  OciConfig: 'application/vnd.oci.image.config.v1+json',
  OciLayer: 'application/vnd.oci.image.layer.v1.tar',
  OciLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  OciLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  DockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  DockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  DockerConfig: 'application/vnd.docker.container.image.v1+json',
  DockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  DockerSchema1: 'application/vnd.docker.distribution.manifest.v1+json',
  DockerSchema1Signed: 'application/vnd.docker.distribution.manifest.v1+prettyjws',
} as const;

/** The Accept list for manifest requests: every type we copy, plus schema 1 so we can refuse it clearly. */
export const MANIFEST_ACCEPT = [
  MediaType.OciIndex,
  MediaType.DockerManifestList,
  MediaType.OciManifest,
  MediaType.DockerManifest,
  MediaType.DockerSchema1Signed,
  MediaType.DockerSchema1,
].join(', ');

export function isIndexType(mt: string | undefined): boolean {
  return mt === MediaType.OciIndex || mt === MediaType.DockerManifestList;
}

export function isImageManifestType(mt: string | undefined): boolean {
  return mt === MediaType.OciManifest || mt === MediaType.DockerManifest;
}

export function isSchema1(mt: string | undefined): boolean {
  return mt === MediaType.DockerSchema1 || mt === MediaType.DockerSchema1Signed;
}
