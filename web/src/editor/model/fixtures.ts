import type { App } from '../../api/types';

export const webhookApp: App = {
  id: 1,
  name: 'Webhook',
  image_url: null,
  status: 'Active',
  account_count: 0,
  provider: 'webhook',
  app_type: 'WEBHOOK',
  auth_type: null,
};

export const apiApp: App = {
  id: 2,
  name: 'API Call',
  image_url: null,
  status: 'Active',
  account_count: 0,
  provider: 'api',
  app_type: 'ADD_ON',
  auth_type: null,
};
