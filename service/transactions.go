package service

func (s *Service) transactionRoutes() []route {
	return []route{}
}
