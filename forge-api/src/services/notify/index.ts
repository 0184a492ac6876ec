export { Notifier, type NotifyListener, type NotifyErrorLog } from './notifier';
export { ActivityListener } from './activities';
export { NotificationListener } from './notifications';
export { WebhookListener, type WebhookSources } from './webhooks';
