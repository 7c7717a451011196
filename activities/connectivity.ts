import type { NetworkClient } from '../network/client';
import { fetchViewer, type ViewerSummary } from '../network/directory';

/** Who we are at the network and which VASPs we may act for (the connectivity check). */
export function connectivityActivities(network: NetworkClient) {
  return {
    /** Reads `GET /auth/viewer`: proves the credentials work and lists the VASPs they control. */
    async fetchViewer(): Promise<ViewerSummary> {
      return fetchViewer(network);
    },
  };
}
