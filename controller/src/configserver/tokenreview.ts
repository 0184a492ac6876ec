/** TokenReviewer on the API server (needs `create tokenreviews` in authentication.k8s.io). */
import type * as k8s from '@kubernetes/client-node';
import type { TokenReviewer } from './auth';

export function apiTokenReviewer(api: k8s.AuthenticationV1Api): TokenReviewer {
  return async (token, audiences) => {
    const review = await api.createTokenReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences } },
    });
    const status = review.status;
    if (!status?.authenticated || !status.user?.username) return undefined;
    const pod = status.user.extra?.['authentication.kubernetes.io/pod-name'];
    return { username: status.user.username, podName: pod?.[0] };
  };
}
