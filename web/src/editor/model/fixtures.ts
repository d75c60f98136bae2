import type { App } from '../../api/models';

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

/** An in-house add-on of the catalogue by its key (Filter, Iterator, ...). */
export function addOn(provider: string, name: string, id = 100): App {
  return { id, name, image_url: null, status: 'Active', account_count: 0, provider, app_type: 'ADD_ON', auth_type: null };
}

/** A catalogue app that needs a token account. */
export const slackApp: App = {
  id: 501,
  name: 'Slack Workspace Messenger',
  image_url: null,
  status: 'Active',
  account_count: 1,
  provider: 'slack',
  app_type: 'api',
  auth_type: 'Token',
};
